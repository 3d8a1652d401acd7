package edge

import (
	"fmt"
	"strings"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// docScope is what one call may see of the documents: those its identity
// may read and whose frontmatter passes its filters.
type docScope struct {
	f  *tools.Filters
	id access.Identity
}

// narrows reports whether the scope excludes any document.
func (s docScope) narrows() bool { return filtering(s.f) || s.id.Restricted() }

// admits reports whether d is in the scope.
func (s docScope) admits(d *doc) bool {
	return s.id.MayRead(d.rec.Repo) && matches(s.f, d.rec.Frontmatter)
}

// filtering reports whether f narrows anything.
func filtering(f *tools.Filters) bool {
	return f != nil && (len(f.Tags) > 0 || f.Priority != "" || f.Assignee != "")
}

// matches reports whether a document's frontmatter passes f: any of the
// tags, and the priority and assignee, compared ignoring case (and a
// leading '@' on assignees). A field f leaves empty passes everything.
func matches(f *tools.Filters, fm map[string]any) bool {
	if !filtering(f) {
		return true
	}
	if len(f.Tags) > 0 && !anyEqual(values(fm["tags"]), f.Tags, nil) {
		return false
	}
	if f.Priority != "" && !anyEqual(values(fm["priority"]), []string{f.Priority}, nil) {
		return false
	}
	atless := func(s string) string { return strings.TrimPrefix(s, "@") }
	if f.Assignee != "" && !anyEqual(values(fm["assignee"]), []string{f.Assignee}, atless) {
		return false
	}
	return true
}

// values reads a frontmatter field as strings: a list, or a scalar, where a
// string may list several values separated by commas ("auth, security").
func values(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, values(x)...)
		}
		return out
	case []string:
		return v
	case string:
		parts := strings.Split(v, ",")
		out := parts[:0]
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	default:
		return []string{fmt.Sprint(v)}
	}
}

func anyEqual(have, want []string, norm func(string) string) bool {
	for _, h := range have {
		for _, w := range want {
			h, w := strings.TrimSpace(h), strings.TrimSpace(w)
			if norm != nil {
				h, w = norm(h), norm(w)
			}
			if strings.EqualFold(h, w) {
				return true
			}
		}
	}
	return false
}
