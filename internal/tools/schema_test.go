package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateAppliesDefaults(t *testing.T) {
	out, err := Validate(ReadContext, json.RawMessage(`{"query":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got ReadContextArgs
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Limit != 5 || got.Mode != "hybrid" {
		t.Fatalf("defaults not applied: %+v", got)
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct{ tool, args, want string }{
		{ReadContext, `{}`, "query"},
		{ReadContext, `{"query":""}`, "minLength"},
		{ReadContext, `{"query":"` + strings.Repeat("x", 201) + `"}`, "maxLength"},
		{ReadContext, `{"query":"a","limit":0}`, "minimum"},
		{ReadContext, `{"query":"a","limit":51}`, "maximum"},
		{ReadContext, `{"query":"a","mode":"magic"}`, "enum"},
		{ReadDoc, `{"path":"/etc/passwd"}`, "pattern"},
		{ReadDoc, `{"path":"docs\\a.md"}`, "pattern"},
		{ReadDoc, `{"path":""}`, "pattern"},
		{ReadDoc, `{"path":"` + strings.Repeat("x/", 513) + `"}`, "maxLength"},
		{ReadDoc, `{"path":"docs/a.md","anchor":"` + strings.Repeat("x", 201) + `"}`, "maxLength"},
		{ReadDoc, `[1,2]`, "JSON object"},
		{ReadDoc, `{"path":"docs/a.md","detail":"summary"}`, "enum"},
		{ListTasks, `{"status":"doing"}`, "enum"},
		{ListTasks, `{"priority":"urgent"}`, "enum"},
		{ListTasks, `{"created":"yesterday"}`, "pattern"},
		{CreateTask, `{}`, "title"},
		{CreateTask, `{"title":""}`, "minLength"},
		{CreateTask, `{"title":"` + strings.Repeat("x", 201) + `"}`, "maxLength"},
		{CreateTask, `{"title":"a","depends_on":["ABC123"]}`, "pattern"},
		{CreateTask, `{"title":"a","repo":"../x"}`, "pattern"},
		{UpdateTask, `{"id":"abc123"}`, "updates"},
		{UpdateTask, `{"id":"abc123","updates":{}}`, "minProperties"},
		{UpdateTask, `{"id":"abc12","updates":{"status":"done"}}`, "pattern"},
		{UpdateTask, `{"id":"abc123","updates":{"notes":"` + strings.Repeat("x", 501) + `"}}`, "maxLength"},
		{UpdateTask, `{"id":"abc123","updates":{"assignee":"` + strings.Repeat("x", 51) + `"}}`, "maxLength"},
		{UpdateTask, `{"id":"abc123","updates":{"status":"doing"}}`, "enum"},
		{GetTaskDependencies, `{}`, "id"},
		{ValidateTaskGraph, `{"id":"x"}`, "pattern"},
		// The rest of seed 002's rules, one case each.
		{ReadContext, `{"query":"a","semantic":"yes"}`, "semantic"},
		{ReadContext, `{"query":"a","limit":2.5}`, "limit"},
		{ReadContext, `{"query":"a","filters":{"tags":[1]}}`, "tags"},
		{ReadDoc, `{}`, "path"},
		{ListTasks, `{"tags":"auth"}`, "tags"},
		{CreateTask, `{"title":"a","priority":"urgent"}`, "enum"},
		{CreateTask, `{"title":"a","depends_on":"abc123"}`, "depends_on"},
		{UpdateTask, `{"id":"abc123","updates":{"priority":"urgent"}}`, "enum"},
		{UpdateTask, `{"id":"abc123","updates":{"title":"renamed"}}`, "title"},
		{UpdateTask, `{"id":"abc123","updates":{"depends_on":["x"]}}`, "pattern"},
		{GetTaskDependencies, `{"id":"ABC123"}`, "pattern"},
		{GetTaskDependencies, `{"id":"abc123","reverse":"yes"}`, "reverse"},
		{SearchMemories, `{"query":""}`, "minLength"},
		{SearchMemories, `{"query":"a","filters":{"kind":"rumour"}}`, "enum"},
		{SearchMemories, `{"query":"a","bogus":1}`, "bogus"},
		{PruneConversation, `{"tool_calls":[]}`, "minItems"},
		{PruneConversation, `{"tool_calls":[{"id":"a","tool":"read","turn":0,"status":"done"}]}`, "enum"},
		{GetScene, `{"token_limit":10}`, "minimum"},
		{GetScene, `{"expand":"node_xyz"}`, "pattern"},
	}
	for _, c := range cases {
		_, err := Validate(c.tool, json.RawMessage(c.args))
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidParams {
			t.Errorf("%s %s: got %v, want invalid params", c.tool, c.args, err)
			continue
		}
		if detail, _ := te.Data["detail"].(string); !strings.Contains(detail, c.want) {
			t.Errorf("%s %s: detail %q does not mention %q", c.tool, c.args, detail, c.want)
		}
	}
}

// TestReadDocAdmitsAnyRepoPath: read_doc reads code, configuration,
// dot-directories and task cards, not only markdown; '..' and control
// characters pass the schema and are refused by the edge with a plain
// message.
func TestReadDocAdmitsAnyRepoPath(t *testing.T) {
	for _, p := range []string{"commands.go", ".github/workflows/ci.yml", ".github/CONTRIBUTING.md", ".cuedeck/cards/abc123.md",
		"docs/a b.md", "Makefile", "src/ünï/çode.rs", "app/docs/api.md", "docs/../x.md"} {
		args, _ := json.Marshal(map[string]string{"path": p, "anchor": "func (*Index).Search"})
		if _, err := Validate(ReadDoc, args); err != nil {
			t.Errorf("read_doc %q: %v", p, err)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	_, err := Validate("nope", nil)
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeMethodMissing {
		t.Fatalf("got %v", err)
	}
}

// MaxContextLimit, which cue search and cue bench check against, is
// read_context's schema maximum: the two cannot drift apart.
func TestMaxContextLimitIsTheSchemas(t *testing.T) {
	var s struct {
		Properties struct {
			Limit struct {
				Maximum int `json:"maximum"`
			} `json:"limit"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(Lookup(ReadContext).InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if s.Properties.Limit.Maximum != MaxContextLimit {
		t.Errorf("read_context's limit maximum is %d, MaxContextLimit %d", s.Properties.Limit.Maximum, MaxContextLimit)
	}
}
