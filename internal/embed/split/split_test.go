package split

import (
	"context"
	"testing"

	"github.com/cuedeck/cuedeck/internal/embed/static"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// model is a static model over a few words, each on its own axis.
func model(name string, words ...string) *static.Model {
	m := &static.Model{Name: name, Dims: len(words), Vocab: map[string]int32{}}
	for i, w := range words {
		m.Vocab[w] = int32(i)
		m.Weight = append(m.Weight, 1)
		row := make([]float32, len(words))
		row[i] = 1
		m.Vec = append(m.Vec, row...)
	}
	return m
}

// TestQueryMeetsEachDocumentInItsModel: a query's dot product with a
// document is the cosine of the model that embedded the document.
func TestQueryMeetsEachDocumentInItsModel(t *testing.T) {
	prose, code := model("prose", "door", "window", "roof"), model("code", "open", "close")
	e, err := New(prose, code)
	if err != nil {
		t.Fatal(err)
	}
	if e.ModelID() != "static:prose+code=static:code" || e.Dimensions() != 5 {
		t.Fatalf("%q, %d dimensions", e.ModelID(), e.Dimensions())
	}
	ctx := context.Background()
	q, err := e.Embed(ctx, []string{"open the door"})
	if err != nil || len(q) != 1 || len(q[0]) != 5 {
		t.Fatalf("query: %v, %v", q, err)
	}
	texts := []string{"the door and the window", "open and close"}
	docs, err := e.EmbedKind(ctx, texts, true)
	if err != nil {
		t.Fatal(err)
	}
	codeDocs, err := e.EmbedKind(ctx, texts, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		for _, c := range []struct {
			got   []float32
			model *static.Model
			zero  []float32
		}{{docs[i], prose, docs[i][3:]}, {codeDocs[i], code, codeDocs[i][:3]}} {
			for _, x := range c.zero {
				if x != 0 {
					t.Fatalf("%q by %s: %v; the other model's half should be zero", text, c.model.Name, c.got)
				}
			}
			mq, _ := c.model.Embed(ctx, []string{"open the door"})
			md, _ := c.model.Embed(ctx, []string{text})
			if got, want := vector.Dot(q[0], c.got), vector.Dot(mq[0], md[0]); abs(got-want) > 1e-6 {
				t.Errorf("%q by %s: query·document %.4f, want the model's own cosine %.4f", text, c.model.Name, got, want)
			}
		}
	}
}

func TestNewWantsBothModels(t *testing.T) {
	if _, err := New(nil, model("code", "open")); err == nil {
		t.Fatal("no prose model: no error")
	}
	if _, err := New(model("prose", "door"), nil); err == nil {
		t.Fatal("no code model: no error")
	}
}

func abs(x float32) float32 { return max(x, -x) }
