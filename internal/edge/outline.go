package edge

import (
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/outline"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// outlineDoc turns a full read_doc result into its outline (detail
// "outline"): Content becomes package outline's rendering of text, the
// untrimmed text Content was cut from, with
// line ranges of the file; Tokens count the outline and FullTokens the
// text it replaced, so the agent sees what it saved. Hash stays the
// text's, so a later full read or a read_context hit can be matched.
// When the outline would not be shorter, the text stays, with Detail
// DetailFull. The outline follows the file's kind (package outline): a
// document's headings with each section's first sentence, a code file's
// declarations.
func outlineDoc(res *tools.ReadDocResult, text string) {
	first := 1
	if res.LineRange != nil {
		first = res.LineRange.Start
	}
	o, ok := outline.RenderFrom(res.Path, []byte(text), first)
	if !ok {
		o = outline.RenderKind(outline.KindMarkdown, res.Path, []byte(text))
	}
	res.FullTokens = res.Tokens
	if n := tokens.Count(o); n < res.Tokens {
		res.Content, res.Tokens, res.Detail = o, n, tools.DetailOutline
	} else {
		// A short text costs less whole than outlined: give it whole.
		res.Detail = tools.DetailFull
	}
}
