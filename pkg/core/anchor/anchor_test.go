package anchor

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// symbolsOf are the symbols of a file as the indexer chunks it.
func symbolsOf(path, content string) []Symbol {
	rec := docparse.Build("r", path, content)
	return Symbols(rec.Chunks, rec.Language)
}

// describe is a symbol as the tests compare it.
func describe(s Symbol) string {
	return fmt.Sprintf("%s|%s|%s|%d|%d-%d", s.Label, strings.Join(s.Names, ","), s.Qualifier, s.Kind, s.Start, s.End)
}

// TestSymbolsOfEachLanguage reads the labels docparse gives each language
// it chunks by declaration.
func TestSymbolsOfEachLanguage(t *testing.T) {
	tests := []struct {
		path, src string
		want      []string
	}{
		{"a.go", "package a\n\nimport \"os\"\n\n// Config configures.\ntype Config struct{}\n\nfunc (c *Config) Load() error { return nil }\n\nfunc (Config) Name() string { return \"\" }\n\nfunc New[T any]() {}\n\nvar _ = os.Exit\n\nconst (\n\tA = 1\n\tB = 2\n)\n", []string{
			"package a|||4|1-3",
			"type Config|Config||0|5-6",
			"func (*Config).Load|Load|Config|2|8-8",
			"func (Config).Name|Name|Config|2|10-10",
			"func New|New||1|12-12",
			"var _|||3|14-14",
			"const (A, B)|A,B||3|16-19",
		}},
		{"bad.go", "package x\n\nfunc (s *Server) Run(ctx context.Context) error {\n\treturn nil\n\nfunc Other( {\n}\n", []string{
			"func (s *Server) Run(ctx context.Context) error {|Run|Server|2|3-4",
			"func Other( {|Other||1|6-7",
		}},
		{"a.py", "import os\n\n# Loads.\n@cache\ndef load(path):\n    return 1\n\n\nclass Store(Base):\n    def __init__(self):\n        pass\n\n    async def get(self, k):\n        return k\n", []string{
			"def load(path):|load||1|3-6",
			"class Store(Base):|Store||0|9-14",
			"def __init__(self):|__init__|Store|2|10-11",
			"async def get(self, k):|get|Store|2|13-14",
		}},
		{"a.ts", "/** Props. */\nexport interface Props {\n  a: string;\n}\n\nexport class Widget extends Base {\n  constructor(p: Props) {\n    super();\n  }\n\n  async render<T>(x: T): Promise<void> {\n    return;\n  }\n}\n\nexport const handler = async (req) => {\n  return 1;\n};\n\nexport default function () {}\n\nfunction helper<T>(a: T): T { return a; }\n", []string{
			"export interface Props {|Props||0|1-4",
			"export class Widget extends Base {|Widget||0|6-14",
			"constructor(p: Props) {|constructor|Widget|2|7-9",
			"async render<T>(x: T): Promise<void> {|render|Widget|2|11-14",
			"export const handler = async (req) => {|handler||3|16-18",
			"export default function () {}|||3|20-20",
			"function helper<T>(a: T): T { return a; }|helper||1|22-22",
		}},
		{"a.rs", "/// A point.\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\nimpl Point {\n    pub fn new(x: i32) -> Self {\n        Point { x }\n    }\n}\n\nimpl fmt::Display for Point {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        Ok(())\n    }\n}\n\npub(crate) async fn run() {}\n", []string{
			"pub struct Point {|Point||0|1-5",
			"impl Point {|||0|7-11",
			"pub fn new(x: i32) -> Self {|new|Point|2|8-11",
			"impl fmt::Display for Point {|||0|13-17",
			"fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {|fmt|Point|2|14-17",
			"pub(crate) async fn run() {}|run||1|19-19",
		}},
		{"A.java", "public class Server {\n    public static void main(String[] args) {\n        new Server();\n    }\n}\n", []string{
			"public class Server {|Server||0|1-5",
			"public static void main(String[] args) {|main|Server|2|2-5",
		}},
		{"a.c", "/* The entry. */\nstatic int helper(int x) {\n    return x;\n}\n\nstruct node {\n    int v;\n};\n\nvoid Tree::insert(int v) {\n}\n", []string{
			"static int helper(int x) {|helper||1|1-4",
			"struct node {|node||0|6-8",
			"void Tree::insert(int v) {|insert|Tree|1|10-11",
		}},
		{"a.rb", "module Shop\nend\n\nclass Cart\n  def self.build\n  end\nend\n", []string{
			"module Shop|Shop||0|1-2",
			"class Cart|Cart||0|4-7",
			"def self.build|build|Cart|2|5-7",
		}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range symbolsOf(tt.path, tt.src) {
			got = append(got, describe(s))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.path, got, tt.want)
		}
	}
}

func TestFind(t *testing.T) {
	syms := []Symbol{
		{Label: "type Index", Names: []string{"Index"}, Kind: KindType, goDecl: true},
		{Label: "func (*Index).Search", Names: []string{"Search"}, Qualifier: "Index", Kind: KindMethod, goDecl: true},
		{Label: "func (*Cache).Search", Names: []string{"Search"}, Qualifier: "Cache", Kind: KindMethod, goDecl: true},
		{Label: "func (Index).Len", Names: []string{"Len"}, Qualifier: "Index", Kind: KindMethod, goDecl: true},
		{Label: "class Store:", Names: []string{"Store"}, Kind: KindType, scope: "Store"},
		{Label: "def get(self, k):", Names: []string{"get"}, Qualifier: "Store", Kind: KindMethod},
	}
	for anchor, want := range map[string][]int{
		"type Index":              {0},
		"Index":                   {0},
		"func (*Index).Search":    {1},
		"(*Index).Search":         {1},
		"(Index).Search":          {1},
		"*Index.Search":           {1},
		"Index.Search":            {1},
		"Index::Search":           {1},
		"func (ix *Index) Search": {1},
		"Index.Search()":          {1},
		"Search":                  {1, 2},
		"Cache.Search":            {2},
		"Len":                     {3},
		"Len()":                   {3},
		"class Store":             {4},
		"Store":                   {4},
		"Store.get":               {5},
		"Store#get":               {5},
		"def get(self, k):":       {5},
		"get":                     {5},
		"Search.Index":            nil,
		"Missing":                 nil,
		"":                        nil,
		"()":                      nil,
	} {
		var got []int
		for _, s := range Find(syms, anchor) {
			got = append(got, slices.IndexFunc(syms, func(x Symbol) bool { return x.Label == s.Label }))
		}
		if !slices.Equal(got, want) {
			t.Errorf("Find(%q) = %v, want %v", anchor, got, want)
		}
	}
	var short []string
	for i := range syms {
		short = append(short, Short(syms, &syms[i]))
	}
	if want := []string{"Index", "Index.Search", "Cache.Search", "Len", "Store", "get"}; !slices.Equal(short, want) {
		t.Errorf("Short = %q, want %q", short, want)
	}
	if got, want := Top(syms, 3), []string{"Index", "Store", "Index.Search"}; !slices.Equal(got, want) {
		t.Errorf("Top = %q, want %q", got, want)
	}
}

// TestSymbolSpansSplitDeclarations: consecutive chunks of one heading path
// are one symbol; a container spans its members.
func TestSymbolSpansSplitDeclarations(t *testing.T) {
	chunks := []events.Chunk{
		{StartLine: 1, EndLine: 2},
		{StartLine: 4, EndLine: 9, HeadingPath: []string{"def load(p):"}},
		{StartLine: 10, EndLine: 15, HeadingPath: []string{"def load(p):"}},
		{StartLine: 18, EndLine: 19, HeadingPath: []string{"class A:"}},
		{StartLine: 20, EndLine: 22, HeadingPath: []string{"class A:", "def f(self):"}},
		{StartLine: 23, EndLine: 30, HeadingPath: []string{"class A:", "def f(self):"}},
		{StartLine: 32, EndLine: 33, HeadingPath: []string{"class A:", "def g(self):"}},
		{StartLine: 36, EndLine: 37, HeadingPath: []string{"def load(p):"}}, // a second load
	}
	var got []string
	for _, s := range Symbols(chunks, "python") {
		got = append(got, fmt.Sprintf("%s %d-%d", s.Label, s.Start, s.End))
	}
	want := []string{"def load(p): 4-15", "class A: 18-33", "def f(self): 20-30", "def g(self): 32-33", "def load(p): 36-37"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestGoDocComment(t *testing.T) {
	src := "package a\n\n// ---- section ----\n\n// Run runs.\n//\n// It blocks.\nfunc Run() {}\n\n/* Stop stops. */\nfunc Stop() {}\n"
	syms := symbolsOf("a.go", src)
	lines := Split(src)
	for label, want := range map[string][2]int{"func Run": {5, 8}, "func Stop": {10, 11}} {
		s := Find(syms, label)
		if len(s) != 1 {
			t.Fatalf("%s not found in %+v", label, syms)
		}
		if start, end := s[0].Lines(lines); start != want[0] || end != want[1] {
			t.Errorf("%s: lines %d-%d, want %d-%d", label, start, end, want[0], want[1])
		}
	}
}

func TestLineRange(t *testing.T) {
	for in, want := range map[string][3]int{
		"L10-L40": {10, 40, 1}, "L10-40": {10, 40, 1}, "10-40": {10, 40, 1}, "l10-l40": {10, 40, 1},
		"#L10-L40": {10, 40, 1}, "L12": {12, 12, 1}, " L1 - L2 ": {1, 2, 1}, "10-L40": {10, 40, 1},
		"12": {}, "10-": {}, "L": {}, "L10L40": {}, "Login": {}, "L10-L40x": {}, "2024": {}, "": {}, "L1234567890": {},
	} {
		first, last, ok := LineRange(in)
		if got := [3]int{first, last, map[bool]int{true: 1}[ok]}; got != want {
			t.Errorf("LineRange(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	lines := Split("a\r\nb\r\n\r\n\r\nc\n")
	for _, tc := range []struct {
		first, last int
		text        string
		start, end  int
	}{
		{1, 2, "a\r\nb", 1, 2},
		{1, 4, "a\r\nb", 1, 2},
		{2, 99, "b\r\n\r\n\r\nc", 2, 5},
		{3, 4, "", 3, 2},
		{0, 1, "a", 1, 1},
	} {
		text, start, end := Cut(lines, tc.first, tc.last)
		if text != tc.text || start != tc.start || end != tc.end {
			t.Errorf("Cut(%d, %d) = %q, %d, %d; want %q, %d, %d", tc.first, tc.last, text, start, end, tc.text, tc.start, tc.end)
		}
	}
	if n := len(Split("")); n != 0 {
		t.Errorf("Split(\"\") has %d lines", n)
	}
}

// BenchmarkTop is what an edge spends per code file it materialises to
// list the file's anchors: this package's own symbols.go, as the indexer
// chunks it.
func BenchmarkTop(b *testing.B) {
	src, err := os.ReadFile("symbols.go")
	if err != nil {
		b.Fatal(err)
	}
	rec := docparse.Build("r", "symbols.go", string(src))
	for b.Loop() {
		Top(Symbols(rec.Chunks, rec.Language), 3)
	}
}
