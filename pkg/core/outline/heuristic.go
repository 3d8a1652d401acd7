package outline

import (
	"regexp"
	"strings"
	"sync"
)

// The declaration heuristic reads a file line by line. A line that opens
// a declaration matches one of its language's patterns, either at the top
// level or directly inside a container (a class, impl, trait, namespace);
// lines inside function bodies are never declarations. A declaration's
// last line is found by braces (strings and comments skipped), or for
// Python by indentation. Its summary is the comment right above it (or a
// Python docstring), else what its body calls, throws and which paths it
// names.

type declKind int

const (
	declOther     declKind = iota
	declFunc               // gets a body summary when it has no comment
	declContainer          // its direct members are declarations too
)

type rule struct {
	re   *regexp.Regexp
	kind declKind
	// member rules match only directly inside a container.
	member bool
}

type ruleset struct {
	rules  []rule
	indent bool // Python: bodies by indentation, not braces
	// lineComment prefixes a comment line; attribute prefixes a decorator
	// or attribute line, skipped between a declaration and its comment.
	lineComment string
	attribute   []string
	// noCharQuote: ' does not quote (Rust lifetimes).
	noCharQuote bool
}

func rx(s string) *regexp.Regexp { return regexp.MustCompile(s) }

const (
	tsMods   = `(?:(?:export|default|declare|async|abstract)\s+)*`
	rustVis  = `(?:pub(?:\s*\([^)]*\))?\s+)?`
	javaMods = `(?:(?:public|private|protected|internal|static|final|abstract|sealed|data|open|partial|inner|enum|annotation|companion|fileprivate|override|suspend|inline|operator|mutating|async|virtual|synchronized|native|default|new|extern|unsafe|readonly|implicit|lazy|case)\s+)*`
)

var tsRules = sync.OnceValue(func() ruleset {
	return ruleset{lineComment: "//", attribute: []string{"@"}, rules: []rule{
		{rx(`^\s*` + tsMods + `function\b`), declFunc, false},
		{rx(`^\s*` + tsMods + `class\b`), declContainer, false},
		{rx(`^\s*` + tsMods + `interface\s+[\w$]+`), declContainer, false},
		{rx(`^\s*` + tsMods + `(?:namespace|module)\s+[\w$.'"]+\s*\{`), declContainer, false},
		{rx(`^\s*` + tsMods + `type\s+[\w$]+.*=`), declOther, false},
		{rx(`^\s*` + tsMods + `(?:const\s+)?enum\s+[\w$]+`), declOther, false},
		{rx(`^\s*` + tsMods + `(?:const|let|var)\s+[\w$]+\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|(?:\([^)]*\)|[\w$]+)\s*(?::[^=]*)?=>)`), declFunc, false},
		{rx(`^\s*export\s+` + tsMods + `(?:const|let|var)\s+[\w$]+`), declOther, false},
		{rx(`^\s*(?:(?:public|private|protected|static|readonly|async|abstract|override|declare|get|set)\s+)*#?[A-Za-z_$][\w$]*\s*(?:<[^>]*>)?\s*\(`), declFunc, true},
	}}
})

var pyRules = sync.OnceValue(func() ruleset {
	return ruleset{indent: true, lineComment: "#", attribute: []string{"@"}, rules: []rule{
		{rx(`^\s*(?:async\s+)?def\s+\w+`), declFunc, false},
		{rx(`^\s*class\s+\w+`), declContainer, false},
	}}
})

var rustRules = sync.OnceValue(func() ruleset {
	return ruleset{lineComment: "//", attribute: []string{"#["}, noCharQuote: true, rules: []rule{
		{rx(`^\s*` + rustVis + `(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+\w+`), declFunc, false},
		{rx(`^\s*` + rustVis + `(?:unsafe\s+)?(?:impl|trait)\b`), declContainer, false},
		{rx(`^\s*` + rustVis + `mod\s+\w+\s*\{`), declContainer, false},
		{rx(`^\s*` + rustVis + `(?:struct|enum|union|type|mod)\s+\w+`), declOther, false},
		{rx(`^\s*` + rustVis + `(?:const|static)\s+(?:mut\s+)?\w+\s*:`), declOther, false},
		{rx(`^\s*macro_rules!\s*\w+`), declOther, false},
	}}
})

var javaRules = sync.OnceValue(func() ruleset {
	return ruleset{lineComment: "//", attribute: []string{"@", "["}, rules: []rule{
		{rx(`^\s*` + javaMods + `(?:class|interface|enum|record|object|struct|trait|protocol|extension|namespace)\s+\w+`), declContainer, false},
		{rx(`^\s*` + javaMods + `(?:fun|func|def)\s+`), declFunc, false},
		{rx(`^\s*` + javaMods + `(?:<[^>]+>\s+)?[\w.\[\]?]+(?:<[^()]*>)?(?:\[\])*\s+\w+\s*\(`), declFunc, true},
		{rx(`^\s*(?:public|private|protected|internal)\s+[A-Z]\w*\s*\(`), declFunc, true}, // a constructor
	}}
})

// goRules outline Go that go/parser refused.
var goRules = sync.OnceValue(func() ruleset {
	return ruleset{lineComment: "//", rules: []rule{
		{rx(`^package\s+\w+`), declOther, false},
		{rx(`^func\b`), declFunc, false},
		{rx(`^type\b`), declOther, false},
		{rx(`^(?:const|var)\b`), declOther, false},
	}}
})

// rulesFor are the rulesets by kind, each compiled on first use: a
// command that outlines nothing (most CLI commands) does not pay for
// compiling them at start.
var rulesFor = map[Kind]func() ruleset{
	KindTypeScript: tsRules,
	KindPython:     pyRules,
	KindRust:       rustRules,
	KindJava:       javaRules,
}

// notNames are words a member pattern can take for a method name, or a
// Java-like pattern for a return type, on a line that is a statement.
var notNames = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true, "function": true,
	"else": true, "do": true, "try": true, "new": true, "typeof": true, "throw": true, "case": true,
	"await": true, "yield": true, "delete": true, "void": false, "super": true, "this": true, "with": true,
	"using": true, "lock": true, "foreach": true, "sizeof": true, "assert": true, "elif": true, "print": false,
}

// open is a declaration whose last line is not known yet.
type open struct {
	idx    int // into out.entries
	kind   declKind
	depth  int // brace depth (or indentation) where it starts
	opened bool
}

func heuristic(o *out, rs ruleset, lines []string) {
	var stack []open
	depth := 0
	inBlock := false // inside a /* */ comment
	lastCode := 0    // Python: the last line holding code
	closeTop := func(end int) {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := &o.entries[top.idx]
		e.end = max(end, e.start)
		if top.kind == declFunc && e.summary == "" && len(o.entries) <= MaxEntries {
			e.summary = bodySummary(lines[e.start-1 : e.end])
		}
	}
	for i, line := range lines {
		ln := i + 1
		trimmed := strings.TrimSpace(line)
		if rs.indent {
			if trimmed == "" || strings.HasPrefix(trimmed, rs.lineComment) {
				continue
			}
			ind := len(line) - len(strings.TrimLeft(line, " \t"))
			for len(stack) > 0 && stack[len(stack)-1].depth >= ind {
				closeTop(lastCode)
			}
			lastCode = ln
			depth = ind
		}
		if !inBlock {
			if r, ok := match(rs, stack, depth, line); ok {
				if !rs.indent {
					// A declaration that never opened a body ends on its
					// own line when the next one starts beside it.
					for len(stack) > 0 && !stack[len(stack)-1].opened && stack[len(stack)-1].depth >= depth {
						closeTop(0)
					}
				}
				stack = append(stack, open{idx: len(o.entries), kind: r.kind, depth: depth})
				o.add(entry{depth: len(stack) - 1, sig: signature(rs, r.kind, trimmed), summary: commentAbove(rs, lines, i), start: ln})
			}
		}
		if rs.indent {
			continue
		}
		peak := depth
		depth, inBlock, peak = braces(rs, line, depth, inBlock)
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if peak > top.depth {
				top.opened = true
			}
			switch {
			case top.opened && depth <= top.depth:
				closeTop(ln)
				continue
			case !top.opened && o.entries[top.idx].start == ln && strings.HasSuffix(trimmed, ";"):
				closeTop(ln)
				continue
			}
			break
		}
		depth = max(depth, 0)
	}
	for len(stack) > 0 {
		end := len(lines)
		if rs.indent {
			end = lastCode
		} else if !stack[len(stack)-1].opened {
			end = 0
		}
		closeTop(end)
	}
}

// match reports the rule line matches, if it may open a declaration here:
// at the top level, or directly inside an opened container.
func match(rs ruleset, stack []open, depth int, line string) (rule, bool) {
	inContainer := false
	switch {
	case len(stack) == 0:
		if depth != 0 {
			return rule{}, false
		}
	default:
		top := stack[len(stack)-1]
		if !top.opened && !rs.indent {
			// Still on the declaration's head (a multi-line signature), or
			// a declaration with no body: only a sibling may start here.
			if depth != top.depth {
				return rule{}, false
			}
			if len(stack) > 1 {
				parent := stack[len(stack)-2]
				inContainer = parent.kind == declContainer
			}
			break
		}
		if top.kind != declContainer {
			return rule{}, false
		}
		if !rs.indent && depth != top.depth+1 {
			return rule{}, false
		}
		inContainer = true
	}
	for _, r := range rs.rules {
		if r.member && !inContainer {
			continue
		}
		loc := r.re.FindStringIndex(line)
		if loc == nil {
			continue
		}
		if r.member && notNames[firstWord(line)] {
			continue
		}
		if r.member && notNames[nameBefore(line[:loc[1]])] {
			continue
		}
		return r, true
	}
	return rule{}, false
}

func firstWord(line string) string {
	f := strings.FieldsFunc(line, func(r rune) bool {
		return !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// nameBefore is the identifier before the '(' that ends s.
func nameBefore(s string) string {
	s = strings.TrimRight(strings.TrimSuffix(s, "("), " \t")
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			i--
			continue
		}
		break
	}
	return s[i:]
}

// braces returns the brace depth after line, whether a block comment is
// still open, and the highest depth reached on the line. Strings and
// comments are skipped.
func braces(rs ruleset, line string, depth int, inBlock bool) (int, bool, int) {
	peak := depth
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inBlock:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				inBlock = false
				i++
			}
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return depth, inBlock, peak
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			inBlock = true
			i++
		case c == '"' || c == '`' || c == '\'' && !rs.noCharQuote:
			quote = c
		case c == '{':
			depth++
			peak = max(peak, depth)
		case c == '}':
			depth--
		}
	}
	return depth, inBlock, peak
}

// signature is a declaration's head as written, without the body's
// opening brace or colon; an unclosed parameter list is marked.
func signature(rs ruleset, k declKind, s string) string {
	s = strings.TrimSpace(s)
	if rs.indent {
		s = strings.TrimSuffix(s, ":")
	} else {
		if i := bodyBrace(s); k == declFunc && i >= 0 {
			s = s[:i] // a one-line body: keep the head only
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "{"))
	}
	if strings.Count(s, "(") > strings.Count(s, ")") {
		s += " …)"
	}
	return s
}

// bodyBrace is the index of the first '{' of s outside parentheses and
// strings, which opens a function's body, or -1.
func bodyBrace(s string) int {
	parens := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '`':
			quote = c
		case c == '(':
			parens++
		case c == ')':
			parens--
		case c == '{' && parens <= 0:
			return i
		}
	}
	return -1
}

// commentAbove is the first sentence of the comment right above line i,
// skipping decorators and attributes; for Python, the docstring below it
// when there is no comment.
func commentAbove(rs ruleset, lines []string, i int) string {
	j := i - 1
	for j >= 0 && isAttribute(rs, strings.TrimSpace(lines[j])) {
		j--
	}
	var text []string
	switch {
	case j < 0:
	case strings.HasSuffix(strings.TrimSpace(lines[j]), "*/"):
		k := j
		for k >= 0 && j-k < 60 && !strings.Contains(lines[k], "/*") {
			k--
		}
		if k >= 0 {
			text = lines[k : j+1]
		}
	case strings.HasPrefix(strings.TrimSpace(lines[j]), rs.lineComment):
		k := j
		for k >= 0 && j-k < 60 && strings.HasPrefix(strings.TrimSpace(lines[k]), rs.lineComment) {
			k--
		}
		text = lines[k+1 : j+1]
	}
	if s := cleanComment(rs, text); s != "" {
		return s
	}
	if rs.indent {
		return docstring(lines, i)
	}
	return ""
}

func isAttribute(rs ruleset, s string) bool {
	for _, a := range rs.attribute {
		if strings.HasPrefix(s, a) {
			return true
		}
	}
	return false
}

// cleanComment strips comment markers and tag lines (@param …) and
// returns the first sentence.
func cleanComment(rs ruleset, lines []string) string {
	var words []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		for _, p := range []string{"/**", "/*!", "/*", "*/", "///", "//!", rs.lineComment} {
			l = strings.TrimPrefix(l, p)
		}
		l = strings.TrimSuffix(strings.TrimSpace(l), "*/")
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*"))
		if strings.HasPrefix(l, "@") {
			break // tags follow the description
		}
		if l == "" && len(words) > 0 {
			break // the first paragraph only
		}
		words = append(words, l)
	}
	return firstSentence(strings.Join(words, " "))
}

// docstring is the first line of the Python docstring after the
// declaration on line i (its head may span lines).
func docstring(lines []string, i int) string {
	for j := i + 1; j < len(lines) && j < i+8; j++ {
		t := strings.TrimSpace(lines[j])
		if t == "" {
			continue
		}
		t = strings.TrimLeft(t, "rRbBuU")
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(t, q) {
				body := t[3:]
				var words []string
				for k := j + 1; ; k++ {
					if end := strings.Index(body, q); end >= 0 {
						words = append(words, body[:end])
						break
					}
					if strings.TrimSpace(body) == "" && len(words) > 0 {
						break
					}
					words = append(words, body)
					if k >= len(lines) || k > j+20 {
						break
					}
					body = lines[k]
				}
				return firstSentence(strings.Join(words, " "))
			}
		}
		if strings.HasSuffix(t, ":") {
			continue // the rest of a multi-line head
		}
		return ""
	}
	return ""
}

var (
	callRE   = rx(`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)!?\s*\(`)
	throwRE  = rx(`\b(?:throw\s+(?:new\s+)?|raise\s+)([A-Za-z_$][\w$.]*)`)
	pathRE   = rx("[\"'`]((?:/|https?://)[^\"'`\\s]{1,80})[\"'`]")
	keywords = map[string]bool{"new": true, "def": true, "fn": true, "func": true, "class": true, "not": true, "and": true, "or": true, "in": true, "is": true, "lambda": true}
)

// bodyScan bounds the lines a body summary reads.
const bodyScan = 300

// bodySummary describes a function by its body: the calls it makes, what
// it throws and the paths or URLs it names. It is what the code shows,
// not what it means.
func bodySummary(body []string) string {
	if len(body) == 0 {
		return ""
	}
	// The head counts only from its body's brace: a one-line function.
	head := ""
	if i := bodyBrace(body[0]); i >= 0 {
		head = body[0][i+1:]
	}
	body = append([]string{head}, body[1:min(len(body), bodyScan)]...)
	var code []string
	for _, l := range body {
		if t := strings.Trim(l, " \t{};"); t != "" {
			code = append(code, t)
		}
	}
	if len(code) == 1 && strings.HasPrefix(code[0], "return ") && len(code[0]) <= 80 {
		return strings.TrimPrefix(code[0], "return ") + " (returns)"
	}
	var calls, throws, paths []string
	seen := map[string]bool{}
	for _, l := range body {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "*") {
			continue
		}
		for _, m := range throwRE.FindAllStringSubmatch(l, -1) {
			if !seen["throw "+m[1]] {
				seen["throw "+m[1]] = true
				throws = append(throws, m[1])
			}
		}
		for _, m := range pathRE.FindAllStringSubmatch(l, -1) {
			if !seen["path "+m[1]] {
				seen["path "+m[1]] = true
				paths = append(paths, `"`+m[1]+`"`)
			}
		}
		for _, m := range callRE.FindAllStringSubmatchIndex(l, -1) {
			name := l[m[2]:m[3]]
			if m[2] > 0 && l[m[2]-1] == '.' {
				continue // a method of a call's result: .then( of x().then(
			}
			before := strings.TrimRight(l[:m[2]], " \t")
			if notNames[name] || keywords[name] || seen[name] || seen["throw "+name] ||
				strings.HasSuffix(before, "new") || strings.HasSuffix(before, "function") {
				continue
			}
			seen[name] = true
			calls = append(calls, name)
		}
	}
	var parts []string
	if len(calls) > 0 {
		parts = append(parts, "calls "+names(calls[:min(len(calls), 5)]))
	}
	if len(paths) > 0 {
		parts = append(parts, "uses "+strings.Join(paths[:min(len(paths), 2)], ", "))
	}
	if len(throws) > 0 {
		parts = append(parts, "throws "+names(throws[:min(len(throws), 3)]))
	}
	return strings.Join(parts, "; ")
}
