package edge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/delta"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// since answers read_doc with since_hash (seed 000 §5, strategy 2): res is
// the full answer for d. When since is the current hash (read_doc's, or
// the file's own that read_context shows) the answer is "unchanged" with
// no content; when it is the read_doc hash of a version the store still
// keeps (history.go), it is the delta from that version's content, as
// read_doc served it, to res.Content; otherwise error 1006 Stale Cache
// with both hashes. A delta that would not be smaller than the file is
// sent as the whole content instead.
func (e *Edge) since(d *doc, res tools.ReadDocResult, since string) (json.RawMessage, error) {
	if res.Anchor != nil {
		return nil, tools.InvalidParams(tools.ReadDoc, "since_hash applies to whole files: omit anchor, or omit since_hash to read the section")
	}
	full := res.Tokens
	res.SinceHash = since
	res.FullTokens = full
	if since == res.Hash || since == d.rec.SHA256 {
		res.Unchanged, res.Content, res.Tokens = true, "", 0
		return json.Marshal(res)
	}
	versions, err := e.m.history(d.key)
	if err != nil {
		return nil, fmt.Errorf("edge: read_doc %s/%s history: %w", d.rec.Repo, d.rec.Path, err)
	}
	for _, v := range versions {
		old := servedContent(v.Content)
		if events.SHA256Hex([]byte(old)) != since {
			continue
		}
		dl := delta.Diff(old, res.Content)
		b, err := json.Marshal(dl)
		if err != nil {
			return nil, err
		}
		if n := tokens.Count(string(b)); n < full {
			res.Delta, res.Content, res.Tokens = &dl, "", n
		}
		return json.Marshal(res)
	}
	return nil, tools.StaleCache(d.rec.Path, since, res.Hash)
}

// servedContent is what read_doc sends of a whole file's content.
func servedContent(content string) string {
	redacted, _ := guard.RedactKeepingLines(content)
	return strings.TrimSpace(redacted)
}
