package scenes

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/cuedeck/cuedeck/pkg/core/delta"
	"github.com/cuedeck/cuedeck/pkg/core/scene"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Seen remembers, per session, which version of each focus file a scene
// sent, so that the next scene for the same session sends a file again
// only as what changed since (seed 000 §5, strategy 2): "unchanged since
// you read it", or a delta when that is smaller than the file. It is safe
// for concurrent use.
//
// Memory is bounded: sessions are evicted least recently used beyond
// MaxSessions, a session remembers at most MaxFiles files, and the texts
// deltas are computed from are shared by hash among sessions and evicted
// least recently used beyond MaxBytes. A file whose sent text was evicted
// is sent whole again.
type Seen struct {
	MaxSessions int
	MaxFiles    int
	MaxBytes    int

	mu       sync.Mutex
	sessions map[string]*list.Element // of *seenSession
	order    list.List                // sessions, most recent first
	texts    map[string]*list.Element // of *seenText, by hash
	textLRU  list.List
	bytes    int
}

type seenSession struct {
	id    string
	files map[string]string // focus path → hash of the text sent
}

type seenText struct {
	hash, text string
}

// Default bounds of a Seen.
const (
	DefaultSeenSessions = 256
	DefaultSeenFiles    = 512
	DefaultSeenBytes    = 16 << 20
)

// NewSeen returns a Seen with the default bounds.
func NewSeen() *Seen {
	return &Seen{MaxSessions: DefaultSeenSessions, MaxFiles: DefaultSeenFiles, MaxBytes: DefaultSeenBytes}
}

// Texts for files a session already holds.
const (
	UnchangedNote = "(unchanged since you read it in an earlier scene)"
	changedNote   = "Changed since you read it in an earlier scene; hunks of the lines you hold:\n"
)

// since rewrites, for session, each focus file whose text the session was
// sent before: unchanged, or a delta when it is smaller than the file. It
// returns the files with the texts to put in the page.
func (s *Seen) since(session string, focus []scene.FocusFile) []scene.FocusFile {
	out := make([]scene.FocusFile, len(focus))
	copy(out, focus)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.sessions[session]
	if !ok {
		return out
	}
	s.order.MoveToFront(el)
	files := el.Value.(*seenSession).files
	for i, f := range out {
		h, ok := files[f.Path]
		if !ok {
			continue
		}
		if h == events.SHA256Hex([]byte(f.Content)) {
			out[i].Content, out[i].Lang = UnchangedNote, ""
			continue
		}
		tel, ok := s.texts[h]
		if !ok {
			continue
		}
		s.textLRU.MoveToFront(tel)
		text := changedNote + delta.Diff(tel.Value.(*seenText).text, f.Content).Text()
		if tokens.Count(text) < tokens.Count(f.Content) {
			out[i].Content, out[i].Lang = text, ""
		}
	}
	return out
}

// sent records that session received focus, with these full texts.
func (s *Seen) sent(session string, focus []scene.FocusFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]*list.Element{}
		s.texts = map[string]*list.Element{}
	}
	el, ok := s.sessions[session]
	if ok {
		s.order.MoveToFront(el)
	} else {
		el = s.order.PushFront(&seenSession{id: session, files: map[string]string{}})
		s.sessions[session] = el
		for s.order.Len() > max(s.MaxSessions, 1) {
			old := s.order.Back()
			delete(s.sessions, old.Value.(*seenSession).id)
			s.order.Remove(old)
		}
	}
	files := el.Value.(*seenSession).files
	for _, f := range focus {
		if _, known := files[f.Path]; !known && len(files) >= s.MaxFiles {
			continue
		}
		h := events.SHA256Hex([]byte(f.Content))
		files[f.Path] = h
		s.keepLocked(h, f.Content)
	}
}

// keepLocked stores text under h, evicting the least recently used texts
// beyond MaxBytes.
func (s *Seen) keepLocked(h, text string) {
	if el, ok := s.texts[h]; ok {
		s.textLRU.MoveToFront(el)
		return
	}
	if len(text) > s.MaxBytes {
		return
	}
	s.texts[h] = s.textLRU.PushFront(&seenText{hash: h, text: text})
	s.bytes += len(text)
	for s.bytes > s.MaxBytes {
		old := s.textLRU.Back()
		t := old.Value.(*seenText)
		delete(s.texts, t.hash)
		s.bytes -= len(t.text)
		s.textLRU.Remove(old)
	}
}

// String describes the memory's use, for logs.
func (s *Seen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d sessions, %d texts, %d bytes", s.order.Len(), s.textLRU.Len(), s.bytes)
}
