package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// sync brings the published state of one path in line with the disk. It
// runs on a publisher goroutine; errors are logged and counted, and the path
// is tried again at its next change or rescan.
func (r *repo) sync(ctx context.Context, rel string, walked bool) {
	if ctx.Err() != nil {
		return
	}
	if err := r.syncPath(ctx, rel, walked); err != nil && ctx.Err() == nil {
		r.mu.Lock()
		r.stats.PublishErrors++
		r.mu.Unlock()
		r.logger.Error("ingest: file not published; it is retried at its next change or rescan", "path", rel, "err", err)
	}
}

func (r *repo) syncPath(ctx context.Context, rel string, walked bool) error {
	prev, had, err := r.s.state.get(r.name, rel)
	if err != nil {
		return err
	}
	gone := !walked && (r.rules.ignored(rel, false) || r.underSymlink(rel))
	var fi fs.FileInfo
	if !gone {
		fi, err = r.root.Lstat(osPath(rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			gone = true
		case err != nil:
			return r.publishSkip(ctx, rel, prev, had, 0, time.Unix(0, 0), events.SkipUnreadable, err.Error())
		}
	}
	if !gone && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := r.root.Stat(osPath(rel))
		switch {
		case err == nil && target.IsDir():
			gone = true // symlinked directories are not descended
		case err == nil:
			fi = target
		case errors.Is(err, fs.ErrNotExist):
			gone = true // dangling, nothing to index
		case errors.Is(err, fs.ErrPermission):
			return r.publishSkip(ctx, rel, prev, had, fi.Size(), fi.ModTime(), events.SkipUnreadable,
				"permission denied following the symlink: make its target readable by the ingest process to index it")
		default:
			dest, _ := r.root.Readlink(osPath(rel))
			return r.publishSkip(ctx, rel, prev, had, fi.Size(), fi.ModTime(), events.SkipSymlinkEscapes,
				fmt.Sprintf("symlink to %s, outside the repository root %s; symlinks are followed only within the repository", dest, r.absRoot))
		}
	}
	if gone {
		if !had {
			return nil
		}
		return r.publishDelete(ctx, rel, prev)
	}
	if !fi.Mode().IsRegular() {
		return r.publishSkip(ctx, rel, prev, had, fi.Size(), fi.ModTime(), events.SkipNotRegular, notRegularDetail(fi.Mode()))
	}
	if fi.Size() > r.s.cfg.MaxFileBytes {
		return r.publishSkip(ctx, rel, prev, had, fi.Size(), fi.ModTime(), events.SkipTooLarge, r.tooLargeDetail(fi.Size()))
	}
	if had && prev.Skip != events.SkipUnreadable && prev.sameAs(fi.Size(), fi.ModTime()) {
		return nil // unchanged: not even read
	}

	checked := time.Now()
	data, opened, err := r.read(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if had {
			return r.publishDelete(ctx, rel, prev)
		}
		return nil
	case errors.Is(err, fs.ErrPermission):
		return r.publishSkip(ctx, rel, prev, had, fi.Size(), fi.ModTime(), events.SkipUnreadable,
			"permission denied: make the file readable by the ingest process to index it")
	case err != nil:
		return fmt.Errorf("read: %w", err)
	case !opened.Mode().IsRegular():
		return r.publishSkip(ctx, rel, prev, had, opened.Size(), opened.ModTime(), events.SkipNotRegular, notRegularDetail(opened.Mode()))
	case int64(len(data)) > r.s.cfg.MaxFileBytes:
		return r.publishSkip(ctx, rel, prev, had, opened.Size(), opened.ModTime(), events.SkipTooLarge, r.tooLargeDetail(opened.Size()))
	}
	size, mod := int64(len(data)), opened.ModTime()
	r.mu.Lock()
	r.stats.FilesRead++
	r.mu.Unlock()
	if detail, binary := looksBinary(data); binary {
		return r.publishSkip(ctx, rel, prev, had, size, mod, events.SkipBinary, detail)
	}
	sha := events.SHA256Hex(data)
	next := fileState{SHA256: sha, Size: size, Mod: mod.UnixNano(), Checked: checked.UnixNano()}
	if had && !prev.Stale && prev.Skip == "" && prev.SHA256 == sha {
		next.Seq = prev.Seq
		return r.s.state.put(r.name, rel, next) // touched, same content
	}
	again := had && prev.Stale
	return r.publishUpsert(ctx, rel, data, next, had, again, again && prev.Skip == "" && prev.SHA256 == sha)
}

// read reads a file through the repo's os.Root, so that a symlink swapped in
// meanwhile cannot lead outside the repo. It is opened non-blocking, so a
// regular file replaced by a FIFO cannot hang the publisher.
func (r *repo) read(rel string) ([]byte, fs.FileInfo, error) {
	f, err := r.root.OpenFile(osPath(rel), os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, nil
	}
	// Sized from the file, so a read is one allocation rather than
	// io.ReadAll's doublings; a file that grew meanwhile still reads whole.
	limit := r.s.cfg.MaxFileBytes + 1
	var buf bytes.Buffer
	buf.Grow(int(min(max(fi.Size(), 0), limit)) + bytes.MinRead)
	_, err = buf.ReadFrom(io.LimitReader(f, limit))
	return buf.Bytes(), fi, err
}

func (r *repo) publishUpsert(ctx context.Context, rel string, data []byte, next fileState, had, again, repeat bool) error {
	mod := time.Unix(0, next.Mod).UTC()
	ev := events.FileUpserted{Repo: r.name, Path: rel, SHA256: next.SHA256, Size: next.Size, ModTime: mod, First: !had, Repeat: repeat}
	// A repeat is published because a comparison found its effect lost
	// (a task log restored, say): the indexer must judge it as a card.
	if !repeat {
		ev.WrittenBackFrom = r.s.writtenBackFrom(r.name, rel, next.SHA256)
	}
	content := data
	if !utf8.Valid(data) {
		content = []byte(strings.ToValidUTF8(string(data), "\uFFFD"))
		ev.UTF8Repaired = true
	}
	if int64(len(content)) <= r.s.cfg.InlineBytes && fitsInline(content, r.s.conn.NC.MaxPayload()) {
		ev.Content = string(content)
	} else {
		if err := r.putBlob(ctx, next.SHA256, content); err != nil {
			return err
		}
		ev.Blob = next.SHA256
	}
	msgID := r.s.again(events.FileUpsertedMsgID(r.name, rel, next.SHA256, mod), again)
	ack, err := bus.PublishEvent(ctx, r.s.conn.JS, events.FileSubject(r.name), msgID, ev)
	if err != nil {
		return err
	}
	next.Seq = ack.Sequence
	if again {
		r.s.publishedAgain(ack.Sequence)
	}
	// Whatever was published, the path's next content is judged afresh:
	// an edit put back to what write-back wrote is an edit.
	r.s.noteWrittenBack(r.name, rel, writtenCard{})
	r.mu.Lock()
	r.stats.Upserted++
	r.stats.Published++
	r.mu.Unlock()
	r.logger.Debug("ingest: upserted", "path", rel, "sha256", next.SHA256, "size", next.Size, "blob", ev.Blob != "")
	// The state follows the acknowledged publish: after a crash in between,
	// the same message id is published again and JetStream drops it.
	return r.s.state.put(r.name, rel, next)
}

// putBlob stores content in the blobs object store under sha, unless an
// object of that name is already there.
func (r *repo) putBlob(ctx context.Context, sha string, content []byte) error {
	if err := bus.Writes.Wait(ctx); err != nil {
		return err
	}
	_, err := r.s.blobs.GetInfo(ctx, sha)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("object store %s: look up %s: %w", events.BlobsBucket, sha, err)
	}
	if _, err := r.s.blobs.PutBytes(ctx, sha, content); err != nil {
		return fmt.Errorf("object store %s: put %s: %w", events.BlobsBucket, sha, err)
	}
	return nil
}

func (r *repo) publishDelete(ctx context.Context, rel string, prev fileState) error {
	ev := events.FileDeleted{Repo: r.name, Path: rel, PrevSHA256: prev.SHA256, PrevMod: prev.modTime().UTC()}
	again := prev.Stale || prev.Size < 0
	msgID := r.s.again(events.FileDeletedMsgID(r.name, rel, prev.SHA256, prev.modTime()), again)
	ack, err := bus.PublishEvent(ctx, r.s.conn.JS, events.FileSubject(r.name), msgID, ev)
	if err != nil {
		return err
	}
	if again {
		r.s.publishedAgain(ack.Sequence)
	}
	r.s.noteWrittenBack(r.name, rel, writtenCard{})
	r.mu.Lock()
	r.stats.Deleted++
	r.stats.Published++
	r.mu.Unlock()
	r.logger.Debug("ingest: deleted", "path", rel)
	return r.s.state.delete(r.name, rel)
}

// publishSkip reports that rel will not be indexed, once per path, size,
// modification time and reason.
func (r *repo) publishSkip(ctx context.Context, rel string, prev fileState, had bool, size int64, mod time.Time, reason events.SkipReason, detail string) error {
	next := fileState{Size: size, Mod: mod.UnixNano(), Skip: reason, Checked: time.Now().UnixNano()}
	if had && !prev.Stale && prev.Skip == reason && prev.Size == size && prev.Mod == next.Mod {
		return nil
	}
	ev := events.FileSkipped{Repo: r.name, Path: rel, Size: size, ModTime: mod.UTC(), Reason: reason, Detail: detail, First: !had}
	again := had && (prev.Stale || prev.Size < 0)
	msgID := r.s.again(events.FileSkippedMsgID(r.name, rel, reason, size, mod), again)
	ack, err := bus.PublishEvent(ctx, r.s.conn.JS, events.FileSubject(r.name), msgID, ev)
	if err != nil {
		return err
	}
	next.Seq = ack.Sequence
	if again {
		r.s.publishedAgain(ack.Sequence)
	}
	r.mu.Lock()
	r.stats.Skipped[reason]++
	r.stats.Published++
	r.mu.Unlock()
	r.logger.Info("ingest: file skipped", "path", rel, "reason", reason, "detail", detail)
	return r.s.state.put(r.name, rel, next)
}

func (r *repo) tooLargeDetail(size int64) string {
	return fmt.Sprintf("%d bytes exceeds the limit of %d bytes; raise the ingest MaxFileBytes setting to index it", size, r.s.cfg.MaxFileBytes)
}

func notRegularDetail(m fs.FileMode) string {
	kind := "special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return "a " + kind + ", not a regular file"
}

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8 << 10

// looksBinary reports whether data is not text: a NUL byte in its first
// 8 KiB, or more than 30% of those bytes control characters or invalid
// UTF-8. Text with a few invalid bytes (a Latin-1 name, say) is text; its
// content is repaired when published.
func looksBinary(data []byte) (detail string, binary bool) {
	sample := data[:min(len(data), sniffLen)]
	if i := bytes.IndexByte(sample, 0); i >= 0 {
		return fmt.Sprintf("NUL byte at offset %d", i), true
	}
	odd := 0
	for i := 0; i < len(sample); {
		c := sample[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !strings.ContainsRune("\t\n\r\f\v\b\x1b", rune(c)) || c == 0x7f {
				odd++
			}
			i++
			continue
		}
		ru, n := utf8.DecodeRune(sample[i:])
		if ru == utf8.RuneError && n == 1 {
			if len(sample) < len(data) && len(sample)-i < utf8.UTFMax {
				break // a character cut by the sample's end
			}
			odd++
		}
		i += n
	}
	if len(sample) > 0 && odd*100 > 30*len(sample) {
		return fmt.Sprintf("%d of the first %d bytes are control characters or invalid UTF-8", odd, len(sample)), true
	}
	return "", false
}

// fitsInline reports whether content, JSON-escaped inside an event, stays
// within the server's maximum payload; if not it travels as a blob.
func fitsInline(content []byte, maxPayload int64) bool {
	const overhead = 4 << 10 // the event's other fields and envelope
	if int64(len(content))*6+overhead <= maxPayload {
		return true
	}
	n := int64(overhead)
	for _, c := range content {
		switch {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		default:
			n++
		}
	}
	// U+2028 and U+2029 are escaped too, 3 bytes becoming 6.
	n += 3 * int64(bytes.Count(content, []byte("\u2028"))+bytes.Count(content, []byte("\u2029")))
	return n <= maxPayload
}
