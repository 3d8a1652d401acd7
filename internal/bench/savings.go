package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/pkg/core/outline"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// The savings scenario (issue 10): give an agent the context for a task
// that touches SavingsTaskFiles files of a SavingsRepoFiles-file Go
// repository, under SavingsBudget tokens.
const (
	SavingsRepoFiles = 500
	SavingsTaskFiles = 5
	SavingsBudget    = 8000
	// SavingsEdited is how many of the task's files change between the
	// first and second scene of a session.
	SavingsEdited = 2
	// savingsFuncTokens is the size of the one-function example (seed
	// 000 §5: an 850-token function and its outline line).
	savingsFuncTokens = 850
	// SavingsSeed is the scenario's seed, fixed so that the report is
	// the same on every run. (Seed 1 gives a fourth file outline long
	// enough that (c) has no room left for the fifth.)
	SavingsSeed    = 2
	savingsCardID  = "s10a01"
	savingsSession = "s1"
)

// Savings is the token-savings report: the same task's context sent four
// ways, all counted by package tokens, and one function whole and as its
// outline line.
type Savings struct {
	RepoFiles int `json:"repo_files"` // Go files in the generated repository
	Budget    int `json:"budget"`     // the scenes' token budget
	// Files are the task's files, in the card's order, with each one's
	// tokens whole and how each scene carried it.
	Files []SavingsFile `json:"files"`
	// CardTokens is the task card alone.
	CardTokens int `json:"card_tokens"`
	// Whole is (a): the task's files whole plus the card, no budget.
	Whole int `json:"whole_tokens"`
	// Seed is (b): the scene packed without outlines (seed 000 §2 alone).
	Seed SavingsScene `json:"seed_scene"`
	// Outlined is (c): the scene with outlines (the default).
	Outlined SavingsScene `json:"outlined_scene"`
	// Repeat is (d): the scene rendered again for the same session after
	// SavingsEdited of the files changed: deltas and "unchanged" markers.
	Repeat SavingsScene `json:"repeat_scene"`
	// Ratios of Whole to each scene's tokens.
	WholeOverSeed     float64 `json:"whole_over_seed"`
	WholeOverOutlined float64 `json:"whole_over_outlined"`
	WholeOverRepeat   float64 `json:"whole_over_repeat"`
	// Func is (e): one Go function whole and as its outline line.
	Func SavingsFunc `json:"function"`
}

// SavingsFile is one task file.
type SavingsFile struct {
	Path   string `json:"path"`
	Tokens int    `json:"tokens"` // the file whole
	Edited bool   `json:"edited"` // changed before the repeat scene
}

// SavingsScene is one built scene. Shown maps each task file to how the
// scene carries it: whole, outline, unchanged, delta or dropped.
type SavingsScene struct {
	Tokens    int               `json:"tokens"`
	Nodes     int               `json:"nodes"`    // nodes the card reaches, itself included
	Included  int               `json:"included"` // of them in the scene
	Truncated bool              `json:"truncated"`
	Shown     map[string]string `json:"shown"`
}

// SavingsFunc is the one-function example.
type SavingsFunc struct {
	Tokens        int     `json:"tokens"`         // the function whole, doc comment included
	OutlineLine   string  `json:"outline_line"`   // its line in the file's outline
	OutlineTokens int     `json:"outline_tokens"` // that line's tokens
	Ratio         float64 `json:"ratio"`          // Tokens / OutlineTokens
}

// How a scene carries a file.
const (
	ShownWhole     = "whole"
	ShownOutline   = "outline"
	ShownUnchanged = "unchanged"
	ShownDelta     = "delta"
	ShownDropped   = "dropped"
)

// RunSavings generates the savings repository under dir (deterministic
// from seed) and measures the scenario. It takes well under a second.
// A budget of zero or less means SavingsBudget.
func RunSavings(dir string, seed uint64, budget int) (*Savings, error) {
	if budget <= 0 {
		budget = SavingsBudget
	}
	task, err := generateGoRepo(dir, SavingsRepoFiles, seed)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()

	s := &Savings{RepoFiles: SavingsRepoFiles, Budget: budget}
	cardText, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "cards", savingsCardID+".md"))
	if err != nil {
		return nil, err
	}
	s.CardTokens = tokens.Count(string(cardText))
	s.Whole = s.CardTokens
	for i, p := range task {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		n := tokens.Count(string(src))
		s.Files = append(s.Files, SavingsFile{Path: p, Tokens: n, Edited: i < SavingsEdited})
		s.Whole += n
	}

	build := func(o scenes.Options) (SavingsScene, error) {
		o.CardID, o.Budget = savingsCardID, budget
		r, err := scenes.Build(fsys, o)
		if err != nil {
			return SavingsScene{}, err
		}
		return SavingsScene{Tokens: r.Tokens, Nodes: r.Nodes, Included: r.Included, Truncated: r.Truncated, Shown: shown(r.Markdown, task)}, nil
	}
	if s.Seed, err = build(scenes.Options{NoOutlines: true}); err != nil {
		return nil, err
	}
	if s.Outlined, err = build(scenes.Options{}); err != nil {
		return nil, err
	}
	seen := scenes.NewSeen()
	if _, err := build(scenes.Options{Seen: seen, Session: savingsSession}); err != nil {
		return nil, err
	}
	for _, p := range task[:SavingsEdited] {
		if err := editConst(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return nil, err
		}
	}
	if s.Repeat, err = build(scenes.Options{Seen: seen, Session: savingsSession}); err != nil {
		return nil, err
	}
	s.WholeOverSeed = ratio(s.Whole, s.Seed.Tokens)
	s.WholeOverOutlined = ratio(s.Whole, s.Outlined.Tokens)
	s.WholeOverRepeat = ratio(s.Whole, s.Repeat.Tokens)
	s.Func = oneFunction(seed)
	return s, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// shown reads from a scene's markdown how it carries each of files.
func shown(md string, files []string) map[string]string {
	out := map[string]string{}
	for _, p := range files {
		i := strings.Index(md, "\n### "+p+" (")
		if i < 0 {
			out[p] = ShownDropped
			continue
		}
		rest := md[i+1:]
		head, body, _ := strings.Cut(rest, "\n")
		if j := strings.Index(body, "\n### "); j >= 0 {
			body = body[:j]
		}
		switch {
		case strings.Contains(head, "outline:"):
			out[p] = ShownOutline
		case strings.Contains(body, scenes.UnchangedNote):
			out[p] = ShownUnchanged
		case strings.Contains(body, "Changed since you read it"):
			out[p] = ShownDelta
		default:
			out[p] = ShownWhole
		}
	}
	return out
}

// editConst makes the small edit of the repeat scene: the file's
// maxAttempts constant goes up by one.
func editConst(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	s := string(b)
	i := strings.Index(s, "maxAttempts = ")
	if i < 0 {
		return fmt.Errorf("bench: %s has no maxAttempts", p)
	}
	j := i + len("maxAttempts = ")
	k := j + strings.IndexByte(s[j:], '\n')
	var n int
	if _, err := fmt.Sscan(s[j:k], &n); err != nil {
		return err
	}
	s = s[:j] + fmt.Sprint(n+1) + s[k:]
	return os.WriteFile(p, []byte(s), 0o644)
}

// oneFunction builds a documented Go function of about
// savingsFuncTokens tokens and measures it against its outline line.
func oneFunction(seed uint64) SavingsFunc {
	g := &gen{r: rand.New(rand.NewPCG(seed^0x5a5a, seed)), seed: seed}
	var body strings.Builder
	src := ""
	for i := 0; ; i++ {
		g.statement(&body, "Ledger", i)
		fn := "// ReconcileInvoices matches the tenant's pending invoices against the\n// ledger entries of the period and returns the ones left unmatched.\n" +
			"func (x *Ledger) ReconcileInvoices(ctx context.Context, tenant string, period Period) ([]Invoice, error) {\n" +
			body.String() + "\treturn nil, nil\n}\n"
		src = fn
		if tokens.Count(fn) >= savingsFuncTokens {
			break
		}
	}
	f := SavingsFunc{Tokens: tokens.Count(src)}
	o, _ := outline.Render("ledger.go", []byte("package ledger\n\n"+src))
	for _, line := range strings.Split(o, "\n") {
		if strings.Contains(line, "ReconcileInvoices(") {
			f.OutlineLine = strings.TrimSpace(line)
		}
	}
	f.OutlineTokens = tokens.Count(f.OutlineLine)
	f.Ratio = ratio(f.Tokens, f.OutlineTokens)
	return f
}

// generateGoRepo writes a Go repository of n .go files in packages of
// several files (a doc.go each), a go.mod, a README and rules, and the
// active task card savingsCardID referencing SavingsTaskFiles of the
// files, which it returns.
func generateGoRepo(dir string, n int, seed uint64) ([]string, error) {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed}
	var pkgs []string
	for _, t := range topics {
		pkgs = append(pkgs, "internal/"+t, "pkg/"+t+"api")
	}
	pkgs = append(pkgs, "cmd/server", "cmd/worker")
	var files []string
	written := 0
	for i := 0; written < n; i++ {
		dirp := pkgs[i%len(pkgs)]
		name := filepath.Base(dirp)
		if i < len(pkgs) {
			doc := fmt.Sprintf("// Package %s %s the %s %s of the %s service.\n//\n// %s\n// %s\npackage %s\n",
				name, g.pick(verbs), g.pick(adjectives), g.pick(nouns)+"s", strings.TrimSuffix(name, "api"), g.sentence(), g.sentence(), name)
			if err := writeFile(dir, dirp+"/doc.go", doc); err != nil {
				return nil, err
			}
			written++
			continue
		}
		p := fmt.Sprintf("%s/%s_%d.go", dirp, g.pick(nouns), i)
		if err := writeFile(dir, p, g.goRepoFile(name, 5+g.r.IntN(6))); err != nil {
			return nil, err
		}
		files = append(files, p)
		written++
	}
	extra := map[string]string{
		"go.mod":            "module example.com/app\n\ngo 1.24\n",
		"README.md":         "# App\n\nThe billing, ledger and gateway services of the example company.\n\nRun `go test ./...`.\n",
		".cuedeck/rules.md": "# Rules\n\n- Run go vet and the tests before committing.\n- Keep handlers idempotent: retries happen.\n",
	}
	for p, s := range extra {
		if err := writeFile(dir, p, s); err != nil {
			return nil, err
		}
	}
	// The task touches files of two packages and their API: the first
	// files of internal/billing and internal/ledger and one of pkg/billingapi.
	var task []string
	want := []string{"internal/billing/", "internal/billing/", "internal/ledger/", "internal/ledger/", "pkg/billingapi/"}
	for _, prefix := range want {
		for _, f := range files {
			if strings.HasPrefix(f, prefix) && !contains(task, f) {
				task = append(task, f)
				break
			}
		}
	}
	if len(task) != SavingsTaskFiles {
		return nil, fmt.Errorf("bench: savings repository has %d task files, want %d", len(task), SavingsTaskFiles)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: %s\ntitle: Reconcile invoices against the ledger before billing\nstatus: active\npriority: high\n---\n\n", savingsCardID)
	b.WriteString("Billing charges invoices the ledger has not settled. Reconcile them first,\nbound the retries and expose the result in the billing API.\n\nFiles:\n\n")
	for _, p := range task {
		fmt.Fprintf(&b, "- @%s\n", p)
	}
	if err := writeFile(dir, ".cuedeck/cards/"+savingsCardID+".md", b.String()); err != nil {
		return nil, err
	}
	return task, nil
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// WriteTable prints the report as a table.
func (s *Savings) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Token savings: a task touching %d files of a %d-file Go repository, budget %d (tokens by pkg/core/tokens)\n\n",
		len(s.Files), s.RepoFiles, s.Budget)
	fmt.Fprintf(&b, "  %-36s %7s  %-9s %-9s %-9s %s\n", "file", "whole", "(b) seed", "(c) outl", "(d) again", "edited")
	for _, f := range s.Files {
		ed := ""
		if f.Edited {
			ed = "yes"
		}
		line := fmt.Sprintf("  %-36s %7d  %-9s %-9s %-9s %s", f.Path, f.Tokens, s.Seed.Shown[f.Path], s.Outlined.Shown[f.Path], s.Repeat.Shown[f.Path], ed)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	fmt.Fprintf(&b, "  %-36s %7d\n\n", "task card", s.CardTokens)
	row := func(name string, n int, r float64, sc *SavingsScene) {
		fmt.Fprintf(&b, "  %-46s %7d", name, n)
		if r > 0 {
			fmt.Fprintf(&b, "  a/x %5.2f", r)
		}
		if sc != nil {
			fmt.Fprintf(&b, "  nodes %d/%d truncated %v", sc.Included, sc.Nodes, sc.Truncated)
		}
		b.WriteString("\n")
	}
	row("(a) the files whole + the card", s.Whole, 0, nil)
	row("(b) scene without outlines (seed)", s.Seed.Tokens, s.WholeOverSeed, &s.Seed)
	row("(c) scene with outlines", s.Outlined.Tokens, s.WholeOverOutlined, &s.Outlined)
	row(fmt.Sprintf("(d) same session again, %d files edited", SavingsEdited), s.Repeat.Tokens, s.WholeOverRepeat, &s.Repeat)
	fmt.Fprintf(&b, "\n  (e) one Go function: %d tokens whole, %d as its outline line (%.1fx)\n      %s\n",
		s.Func.Tokens, s.Func.OutlineTokens, s.Func.Ratio, s.Func.OutlineLine)
	_, err := io.WriteString(w, b.String())
	return err
}

// goRepoFile is a Go source file of package pkg: imports, a constant, a
// documented type and funcs documented methods with bodies.
func (g *gen) goRepoFile(pkg string, funcs int) string {
	var b strings.Builder
	typ := title(g.pick(nouns))
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"time\"\n)\n\n", pkg)
	fmt.Fprintf(&b, "// maxAttempts bounds the retries of a %s.\nconst maxAttempts = %d\n\n", strings.ToLower(typ), 2+g.r.IntN(6))
	fmt.Fprintf(&b, "// Err%s is returned when the %s is %s.\nvar Err%s = errors.New(\"%s: %s %s\")\n\n", typ, g.pick(nouns), g.pick(adjectives), typ, pkg, g.pick(adjectives), g.pick(nouns))
	fmt.Fprintf(&b, "// %s %s\n// It is safe for concurrent use once built.\ntype %s struct {\n", typ, strings.TrimPrefix(g.sentence(), "The "), typ)
	for range 3 + g.r.IntN(4) {
		fmt.Fprintf(&b, "\t%s %s // %s\n", g.pick(nouns), g.pick([]string{"string", "int", "time.Duration", "[]byte", "map[string]int", "*Client", "chan struct{}"}), g.pick(adjectives))
	}
	b.WriteString("}\n")
	for i := range funcs {
		fn := title(g.pick(verbs)) + title(g.pick(nouns))
		fmt.Fprintf(&b, "\n// %s %s\n// %s\nfunc (x *%s) %s(ctx context.Context, %s string, limit int) (int, error) {\n", fn, strings.ToLower(g.sentence()[:1])+g.sentence()[1:], g.sentence(), typ, fn, g.pick(nouns))
		var body strings.Builder
		for k := range 2 + g.r.IntN(4) {
			g.statement(&body, typ, i*10+k)
		}
		b.WriteString(body.String())
		b.WriteString("\treturn limit, nil\n}\n")
	}
	return b.String()
}

// statement writes one block of a function body: a deadline, a retry
// loop, a switch or a validation, with the variables it declares
// suffixed by k so that blocks compose.
func (g *gen) statement(b *strings.Builder, typ string, k int) {
	switch g.r.IntN(4) {
	case 0:
		fmt.Fprintf(b, "\tctx%d, cancel%d := context.WithTimeout(ctx, %d*time.Second)\n\tdefer cancel%d()\n\tif err := x.%s(ctx%d); err != nil {\n\t\treturn 0, fmt.Errorf(\"%s %s: %%w\", err)\n\t}\n",
			k, k, 1+g.r.IntN(30), k, title(g.pick(verbs)), k, g.pick(verbs), g.pick(nouns))
	case 1:
		fmt.Fprintf(b, "\tvar last%d error\n\tfor attempt := 0; attempt < maxAttempts; attempt++ {\n\t\tif last%d = ctx.Err(); last%d != nil {\n\t\t\tbreak\n\t\t}\n\t\t// The %s %s %s the %s %s.\n\t\ttime.Sleep(time.Duration(attempt) * %d * time.Millisecond)\n\t}\n\tif last%d != nil {\n\t\treturn 0, errors.Join(Err%s, last%d)\n\t}\n",
			k, k, k, g.pick(topics), g.pick(nouns), g.pick(verbs), g.pick(adjectives), g.pick(nouns), 10+g.r.IntN(90), k, typ, k)
	case 2:
		fmt.Fprintf(b, "\tswitch state%d := %q; state%d {\n\tcase %q:\n\t\tlimit--\n\tcase %q, %q:\n\t\tlimit = min(limit, %d)\n\tdefault:\n\t\treturn 0, fmt.Errorf(\"%s: unknown state %%q\", state%d)\n\t}\n",
			k, g.pick(adjectives), k, g.pick(adjectives), g.pick(adjectives), g.pick(adjectives), 1+g.r.IntN(100), g.pick(nouns), k)
	default:
		fmt.Fprintf(b, "\tif limit <= 0 || limit > %d {\n\t\treturn 0, fmt.Errorf(\"%s %s: limit %%d out of range\", limit)\n\t}\n\tseen%d := make(map[string]int, limit)\n\tfor i := range limit {\n\t\tseen%d[fmt.Sprint(i)]++\n\t}\n",
			100+g.r.IntN(9900), g.pick(topics), g.pick(nouns), k, k)
	}
}
