// Package card reads and writes task cards: the markdown files under
// .cuedeck/cards/ whose YAML frontmatter holds a task (id, title, status,
// priority, assignee, tags, depends_on, created, updated, notes,
// close_reason, comments) and whose body is free text. The indexer parses cards into task events; ingest and
// `cue card new` render tasks back into files. Rendering keeps the body byte
// for byte and any frontmatter keys it does not know, in their order, so a
// card edited by hand and by an agent loses nothing.
package card

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Dir is where cards live, relative to the repository root.
const Dir = ".cuedeck/cards"

// Path is the repository-relative path of the card with id.
func Path(id string) string { return Dir + "/" + id + ".md" }

// PathOf is where t's card is: its recorded path when that is a card
// path, else the default for its id.
func PathOf(t events.Task) string {
	p := t.Path
	if events.ValidatePath(p) == nil && strings.HasPrefix(p, Dir+"/") && strings.HasSuffix(p, ".md") {
		return p
	}
	return Path(t.ID)
}

// The statuses and priorities a task may have.
var (
	Statuses   = []string{"todo", "active", "done", "archived"}
	Priorities = []string{"low", "medium", "high", "critical"}
)

// Defaults for a card that leaves status or priority out.
const (
	DefaultStatus   = "todo"
	DefaultPriority = "medium"
)

// ErrInvalid is wrapped by every error Parse and Validate return.
var ErrInvalid = errors.New("invalid card")

// Error is a problem with a card, at a line of its file (1-indexed; 0 when
// the problem is with a task not read from a file).
type Error struct {
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("card: line %d: %s", e.Line, e.Msg)
	}
	return "card: " + e.Msg
}

// Unwrap lets errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

var idPattern = regexp.MustCompile(`^[a-z0-9]{6}$`)

// ValidID reports whether id is a task id: six lowercase letters or digits.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Field is a frontmatter key the card format does not define, kept as the
// YAML node it was written as. To change one, replace its Value.
type Field struct {
	Key   string
	Value *yaml.Node
}

// Card is a parsed card file.
type Card struct {
	// Task is the frontmatter's task. Parse leaves Path empty: a card does
	// not know where it is stored.
	Task events.Task
	// Body is everything after the closing --- line, byte for byte.
	Body string
	// Extra are the unknown frontmatter keys, in file order.
	Extra []Field

	src *source
}

// source is what Parse read, so that Render can keep what did not change.
type source struct {
	front string // the file up to the body
	task  events.Task
	extra string // extras as encoded when parsed
	keys  []entry
}

type entry struct {
	key       string
	keyNode   *yaml.Node
	valueNode *yaml.Node
}

// Known keys, in the order a new card is written.
const (
	keyID        = "id"
	keyTitle     = "title"
	keyStatus    = "status"
	keyPriority  = "priority"
	keyAssignee  = "assignee"
	keyTags      = "tags"
	keyDependsOn = "depends_on"
	keyCreated   = "created"
	keyUpdated   = "updated"
	keyNotes     = "notes"
	keyClose     = "close_reason"
	keyComments  = "comments"
)

var knownKeys = []string{keyID, keyTitle, keyStatus, keyPriority, keyAssignee, keyTags, keyDependsOn, keyCreated, keyUpdated, keyNotes, keyClose, keyComments}

func isKnown(k string) bool { return slices.Contains(knownKeys, k) }

// Parse reads a card. A missing status or priority takes its default; a
// missing or malformed id, a missing title, an unknown status or priority, a
// malformed date, a duplicate key or broken YAML is an *Error (wrapping
// ErrInvalid) naming the line. Frontmatter errors from the YAML itself are
// reported with their file line as well.
func Parse(src []byte) (Card, error) {
	fm, ok, err := markdown.ParseFrontmatterNodes(src)
	if !ok {
		return Card{}, &Error{Line: 1, Msg: "a card starts with a --- line, then YAML frontmatter (id, title, ...), then ---"}
	}
	if err != nil {
		var fe *markdown.FrontmatterError
		if errors.As(err, &fe) {
			return Card{}, &Error{Line: fe.Line, Msg: fe.Msg}
		}
		return Card{}, &Error{Line: 1, Msg: err.Error()}
	}
	c := Card{Body: string(src[fm.BodyOffset:])}
	src0 := &source{front: string(src[:fm.BodyOffset])}
	t := &c.Task
	firstLine := map[string]int{}
	m := fm.Mapping
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], m.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return Card{}, &Error{Line: kn.Line, Msg: "frontmatter keys must be plain words"}
		}
		k := kn.Value
		if at, dup := firstLine[k]; dup {
			return Card{}, &Error{Line: kn.Line, Field: k, Msg: fmt.Sprintf("key %q appears twice (first at line %d)", k, at)}
		}
		firstLine[k] = kn.Line
		src0.keys = append(src0.keys, entry{key: k, keyNode: kn, valueNode: vn})
		if !isKnown(k) {
			c.Extra = append(c.Extra, Field{Key: k, Value: vn})
			continue
		}
		if err := decodeField(t, k, vn); err != nil {
			return Card{}, err
		}
	}
	if t.ID == "" {
		return Card{}, &Error{Line: 1, Field: keyID, Msg: "the card has no id; add an id: line with six lowercase letters or digits"}
	}
	if _, ok := firstLine[keyTitle]; !ok || strings.TrimSpace(t.Title) == "" {
		return Card{}, &Error{Line: max(firstLine[keyTitle], 1), Field: keyTitle, Msg: "the card has no title; add a title: line"}
	}
	if t.Status == "" {
		t.Status = DefaultStatus
	}
	if t.Priority == "" {
		t.Priority = DefaultPriority
	}
	src0.task = c.Task
	src0.extra = encodeExtras(c.Extra)
	c.src = src0
	return c, nil
}

func decodeField(t *events.Task, k string, n *yaml.Node) error {
	v := n
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	fail := func(format string, args ...any) error {
		return &Error{Line: n.Line, Field: k, Msg: k + ": " + fmt.Sprintf(format, args...)}
	}
	null := v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null"
	scalar := func() (string, error) {
		if null {
			return "", nil
		}
		if v.Kind != yaml.ScalarNode {
			return "", fail("want a single value, not %s", kindName(v))
		}
		return v.Value, nil
	}
	list := func() ([]string, error) {
		if null {
			return nil, nil
		}
		if v.Kind != yaml.SequenceNode {
			return nil, fail("want a list such as [a, b], not %s", kindName(v))
		}
		out := make([]string, 0, len(v.Content))
		for _, e := range v.Content {
			for e.Kind == yaml.AliasNode && e.Alias != nil {
				e = e.Alias
			}
			if e.Kind != yaml.ScalarNode || e.ShortTag() == "!!null" {
				return nil, &Error{Line: e.Line, Field: k, Msg: k + ": every item must be a single value"}
			}
			out = append(out, e.Value)
		}
		return out, nil
	}
	var err error
	switch k {
	case keyID:
		if t.ID, err = scalar(); err != nil {
			return err
		}
		if !ValidID(t.ID) {
			return fail("%q is not a task id (six lowercase letters or digits)", t.ID)
		}
	case keyTitle:
		t.Title, err = scalar()
	case keyStatus:
		if t.Status, err = scalar(); err == nil && !slices.Contains(Statuses, t.Status) {
			return fail("%q is not one of %s", t.Status, strings.Join(Statuses, ", "))
		}
	case keyPriority:
		if t.Priority, err = scalar(); err == nil && !slices.Contains(Priorities, t.Priority) {
			return fail("%q is not one of %s", t.Priority, strings.Join(Priorities, ", "))
		}
	case keyAssignee:
		t.Assignee, err = scalar()
	case keyNotes:
		t.Notes, err = scalar()
	case keyClose:
		t.CloseReason, err = scalar()
	case keyComments:
		t.Comments, err = decodeComments(v, null, fail)
	case keyTags:
		t.Tags, err = list()
	case keyDependsOn:
		if t.DependsOn, err = list(); err == nil {
			for _, id := range t.DependsOn {
				if !ValidID(id) {
					return fail("%q is not a task id (six lowercase letters or digits)", id)
				}
			}
		}
	case keyCreated, keyUpdated:
		var s string
		if s, err = scalar(); err != nil || s == "" {
			return err
		}
		at, perr := parseTime(s)
		if perr != nil {
			return fail("%q is not a date and time (write it as 2026-01-02T10:43:00Z)", s)
		}
		if k == keyCreated {
			t.Created = at
		} else {
			t.Updated = at
		}
	}
	return err
}

// decodeComments reads comments: a list of mappings, each with text and
// optionally at (a date and time) and by.
func decodeComments(v *yaml.Node, null bool, fail func(string, ...any) error) ([]events.TaskComment, error) {
	if null {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, fail("want a list of comments (each with text:, and at: and by: if known), not %s", kindName(v))
	}
	out := make([]events.TaskComment, 0, len(v.Content))
	for _, item := range v.Content {
		for item.Kind == yaml.AliasNode && item.Alias != nil {
			item = item.Alias
		}
		bad := &Error{Line: item.Line, Field: keyComments, Msg: "comments: every comment is a mapping with text: (and at:, by: if known)"}
		if item.Kind != yaml.MappingNode {
			return nil, bad
		}
		var c events.TaskComment
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, val := item.Content[i], item.Content[i+1]
			for val.Kind == yaml.AliasNode && val.Alias != nil {
				val = val.Alias
			}
			if val.Kind != yaml.ScalarNode {
				return nil, &Error{Line: val.Line, Field: keyComments, Msg: "comments: " + k.Value + ": want a single value"}
			}
			switch k.Value {
			case "text":
				c.Text = val.Value
			case "by":
				c.By = val.Value
			case "at":
				at, err := parseTime(val.Value)
				if err != nil {
					return nil, &Error{Line: val.Line, Field: keyComments, Msg: fmt.Sprintf("comments: at: %q is not a date and time (write it as 2026-01-02T10:43:00Z)", val.Value)}
				}
				c.At = at
			default:
				return nil, &Error{Line: k.Line, Field: keyComments, Msg: fmt.Sprintf("comments: %q is not a comment field (text, at, by)", k.Value)}
			}
		}
		if strings.TrimSpace(c.Text) == "" {
			return nil, bad
		}
		out = append(out, c)
	}
	return out, nil
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", time.DateOnly}

func parseTime(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, ErrInvalid
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "a single value"
}

// Validate reports why t cannot be written as a card: a malformed id or
// dependency id, an empty title, or an unknown status or priority. The
// error is an *Error wrapping ErrInvalid.
func Validate(t events.Task) error {
	switch {
	case !ValidID(t.ID):
		return &Error{Field: keyID, Msg: fmt.Sprintf("id %q is not a task id (six lowercase letters or digits)", t.ID)}
	case strings.TrimSpace(t.Title) == "":
		return &Error{Field: keyTitle, Msg: "the title is empty"}
	case !slices.Contains(Statuses, t.Status):
		return &Error{Field: keyStatus, Msg: fmt.Sprintf("status %q is not one of %s", t.Status, strings.Join(Statuses, ", "))}
	case !slices.Contains(Priorities, t.Priority):
		return &Error{Field: keyPriority, Msg: fmt.Sprintf("priority %q is not one of %s", t.Priority, strings.Join(Priorities, ", "))}
	}
	for _, id := range t.DependsOn {
		if !ValidID(id) {
			return &Error{Field: keyDependsOn, Msg: fmt.Sprintf("dependency %q is not a task id", id)}
		}
	}
	return nil
}

// SameTask reports whether a and b are the same task state: equal fields,
// times equal as instants, and a nil list equal to an empty one.
func SameTask(a, b events.Task) bool {
	return a.Path == b.Path && sameFront(a, b)
}

// sameFront is SameTask without Path, which the frontmatter does not hold.
func sameFront(a, b events.Task) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Status == b.Status && a.Priority == b.Priority &&
		a.Assignee == b.Assignee && a.Notes == b.Notes && a.CloseReason == b.CloseReason &&
		sameComments(a.Comments, b.Comments) &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.DependsOn, b.DependsOn) &&
		a.Created.Equal(b.Created) && a.Updated.Equal(b.Updated)
}

func sameComments(a, b []events.TaskComment) bool {
	return slices.EqualFunc(a, b, func(x, y events.TaskComment) bool {
		return x.At.Equal(y.At) && x.By == y.By && x.Text == y.Text
	})
}

// Render writes c as a card file. When c came from Parse and neither its
// task nor its extra keys changed, the frontmatter is written exactly as it
// was read; otherwise it is written afresh, keeping the keys' order and the
// nodes of values that did not change, with unknown keys in place and new
// keys after them. The body is always written byte for byte. Render returns
// Validate's error for a task that cannot be a card.
func Render(c Card) ([]byte, error) {
	if err := Validate(c.Task); err != nil {
		return nil, err
	}
	if c.src != nil && sameFront(c.Task, c.src.task) && encodeExtras(c.Extra) == c.src.extra {
		return []byte(c.src.front + c.Body), nil
	}
	type kv struct {
		key  string
		k, v *yaml.Node
	}
	var out []kv
	done := map[string]bool{}
	extra := map[string]*yaml.Node{}
	for _, f := range c.Extra {
		if _, dup := extra[f.Key]; !dup && f.Value != nil {
			extra[f.Key] = f.Value
		}
	}
	var orig events.Task
	if c.src != nil {
		orig = c.src.task
		for _, e := range c.src.keys {
			if done[e.key] {
				continue
			}
			if isKnown(e.key) {
				if v, keep := knownNode(e.key, c.Task, orig, e.valueNode, true); keep {
					out = append(out, kv{e.key, e.keyNode, v})
				}
				done[e.key] = true
			} else if v, ok := extra[e.key]; ok {
				out = append(out, kv{e.key, e.keyNode, v})
				done[e.key] = true
			}
		}
	}
	// A known key the file did not have goes after the last key that
	// precedes it in the canonical order, or first.
	for i, k := range knownKeys {
		if done[k] {
			continue
		}
		done[k] = true
		v, keep := knownNode(k, c.Task, orig, nil, false)
		if !keep {
			continue
		}
		at := 0
		for j, e := range out {
			if slices.Contains(knownKeys[:i], e.key) {
				at = j + 1
			}
		}
		out = slices.Insert(out, at, kv{k, str(k), v})
	}
	for _, f := range c.Extra {
		if !done[f.Key] && f.Value != nil {
			out = append(out, kv{f.Key, str(f.Key), f.Value})
			done[f.Key] = true
		}
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, e := range out {
		m.Content = append(m.Content, e.k, e.v)
	}
	m = resolveAliases(m, map[string]bool{})
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, &Error{Msg: "encode frontmatter: " + err.Error()}
	}
	if err := enc.Close(); err != nil {
		return nil, &Error{Msg: "encode frontmatter: " + err.Error()}
	}
	buf.WriteString("---\n")
	buf.WriteString(c.Body)
	return buf.Bytes(), nil
}

// knownNode returns the value node for known key k of t, and whether the
// key is written at all. The original node is kept when the value did not
// change; an optional value that is now empty is dropped unless it was
// already written empty.
func knownNode(k string, t, orig events.Task, origNode *yaml.Node, had bool) (*yaml.Node, bool) {
	unchanged := false
	empty := false
	var fresh func() *yaml.Node
	switch k {
	case keyID:
		unchanged, fresh = t.ID == orig.ID, func() *yaml.Node { return str(t.ID) }
	case keyTitle:
		unchanged, fresh = t.Title == orig.Title, func() *yaml.Node { return str(t.Title) }
	case keyStatus:
		unchanged, fresh = t.Status == orig.Status, func() *yaml.Node { return str(t.Status) }
	case keyPriority:
		unchanged, fresh = t.Priority == orig.Priority, func() *yaml.Node { return str(t.Priority) }
	case keyAssignee:
		unchanged, empty, fresh = t.Assignee == orig.Assignee, t.Assignee == "", func() *yaml.Node { return str(t.Assignee) }
	case keyNotes:
		unchanged, empty, fresh = t.Notes == orig.Notes, t.Notes == "", func() *yaml.Node { return str(t.Notes) }
	case keyClose:
		unchanged, empty, fresh = t.CloseReason == orig.CloseReason, t.CloseReason == "", func() *yaml.Node { return str(t.CloseReason) }
	case keyComments:
		unchanged, empty, fresh = sameComments(t.Comments, orig.Comments), len(t.Comments) == 0, func() *yaml.Node { return comments(t.Comments) }
	case keyTags:
		unchanged, empty, fresh = slices.Equal(t.Tags, orig.Tags), len(t.Tags) == 0, func() *yaml.Node { return list(t.Tags) }
	case keyDependsOn:
		unchanged, empty, fresh = slices.Equal(t.DependsOn, orig.DependsOn), len(t.DependsOn) == 0, func() *yaml.Node { return list(t.DependsOn) }
	case keyCreated:
		unchanged, empty, fresh = t.Created.Equal(orig.Created), t.Created.IsZero(), func() *yaml.Node { return timeNode(t.Created) }
	case keyUpdated:
		unchanged, empty, fresh = t.Updated.Equal(orig.Updated), t.Updated.IsZero(), func() *yaml.Node { return timeNode(t.Updated) }
	}
	if had && unchanged && origNode != nil {
		return origNode, true
	}
	if k == keyComments && had && origNode != nil && origNode.Kind == yaml.SequenceNode &&
		len(orig.Comments) <= len(t.Comments) && sameComments(orig.Comments, t.Comments[:len(orig.Comments)]) {
		// Comments only added: the ones in the file keep their form.
		n := *origNode
		n.Content = append(slices.Clip(origNode.Content), comments(t.Comments[len(orig.Comments):]).Content...)
		return &n, true
	}
	if empty {
		return nil, false
	}
	n := fresh()
	if origNode != nil {
		n.HeadComment, n.LineComment, n.FootComment = origNode.HeadComment, origNode.LineComment, origNode.FootComment
	}
	return n, true
}

func str(s string) *yaml.Node {
	if plainSafe(s) {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	}
	n := &yaml.Node{}
	if err := n.Encode(s); err != nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	return n
}

// plainSafe reports whether s is a string YAML writes plain and reads back
// as the same string, as Node.Encode decides it: a letter, then letters,
// digits, spaces and "_-./", no space at the end, and not a word YAML 1.1
// reads as a boolean or null. Node.Encode writes the value out and parses
// it back, which made rendering a card most of the cost of writing a task
// back; the rest still goes through it.
func plainSafe(s string) bool {
	if s == "" || !isASCIILetter(s[0]) || s[len(s)-1] == ' ' || len(s) > 64 {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isASCIILetter(c) && (c < '0' || c > '9') && c != ' ' && c != '_' && c != '-' && c != '.' && c != '/' {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func list(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range items {
		n.Content = append(n.Content, str(s))
	}
	return n
}

// comments writes one block mapping a comment, in the order at, by, text.
func comments(cs []events.TaskComment) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, c := range cs {
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if !c.At.IsZero() {
			m.Content = append(m.Content, str("at"), timeNode(c.At))
		}
		if c.By != "" {
			m.Content = append(m.Content, str("by"), str(c.By))
		}
		m.Content = append(m.Content, str("text"), str(c.Text))
		n.Content = append(n.Content, m)
	}
	return n
}

func timeNode(t time.Time) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: t.Format(time.RFC3339Nano)}
}

// encodeExtras is the extras' YAML, to tell whether a caller changed them.
func encodeExtras(fs []Field) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Key)
		b.WriteString("\x00")
		if f.Value != nil {
			out, err := yaml.Marshal(f.Value)
			if err != nil {
				b.WriteString(fmt.Sprintf("%p", f.Value))
			}
			b.Write(out)
		}
		b.WriteString("\x00")
	}
	return b.String()
}

// resolveAliases returns n with every alias whose anchor is not written
// before it (its anchored value was replaced or moved) swapped for the
// anchored node itself, so the output never refers to a missing anchor.
// Nodes it changes are copied: the parsed tree is left alone.
func resolveAliases(n *yaml.Node, defined map[string]bool) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil && !defined[n.Value] {
		return resolveAliases(n.Alias, defined)
	}
	if n.Anchor != "" {
		defined[n.Anchor] = true
	}
	var out *yaml.Node
	for i, c := range n.Content {
		r := resolveAliases(c, defined)
		if r == c {
			continue
		}
		if out == nil {
			cp := *n
			cp.Content = slices.Clone(n.Content)
			out = &cp
		}
		out.Content[i] = r
	}
	if out == nil {
		return n
	}
	return out
}
