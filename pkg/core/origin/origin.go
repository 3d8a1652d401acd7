// Package origin tells what a documentation page is besides its content:
// the natural language it is written in and whether it is a blog or news
// post, from its path and frontmatter; and which of those a query asks
// for, from its script and words. The edge's ranking uses it to prefer a
// repository's canonical pages over their translations and over posts
// about them, unless the query asks for those (internal/edge, prior.go).
// The package is pure.
package origin

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

// Origin is what a document is, besides its content.
type Origin struct {
	// Lang is the primary subtag of the document's language, lowercase
	// ("ja", "zh", "pt"), or "" when neither path nor frontmatter says.
	Lang string
	// Post is true for a blog or news post.
	Post bool
}

// languages are the ISO 639-1 codes (and fil) read as a language in a
// path or in frontmatter.
var languages = setOf("af", "am", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da",
	"de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fil", "fr", "ga", "gl", "gu", "he",
	"hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "kk", "km", "kn", "ko", "ky", "lo",
	"lt", "lv", "mk", "ml", "mn", "mr", "ms", "my", "nb", "ne", "nl", "nn", "no", "pa", "pl",
	"ps", "pt", "ro", "ru", "si", "sk", "sl", "sq", "sr", "sv", "sw", "ta", "te", "tg", "th",
	"tl", "tr", "uk", "ur", "uz", "vi", "zh")

// ambiguous codes are also common directory and file words ("it" tests,
// "id", "ml", "ca"): a bare one counts only under a parent that holds
// nothing but translations.
var ambiguous = setOf("am", "as", "be", "ca", "id", "is", "it", "km", "lo", "ml", "mn", "ms",
	"my", "ne", "no", "or", "pa", "ps", "si", "so", "sw", "ta", "te", "tg", "tl", "to")

// localeParents are directories whose children are named by language:
// Hugo's content/ja, mkdocs' docs/fr, Docusaurus' i18n/zh-cn. Under the
// strict ones, every child is a language.
var (
	localeParents = setOf("docs", "doc", "documentation", "site", "website")
	strictParents = setOf("content", "i18n", "l10n", "locales", "locale", "translations",
		"translation", "lang", "langs", "languages")
)

// postDirs hold blog and news posts.
var postDirs = setOf("blog", "blogs", "news", "posts", "_posts", "announcements")

// postTypes are frontmatter type or layout values of a post.
var postTypes = setOf("blog", "post", "posts", "news", "article", "announcement")

// datedName is a post's file name: 2023-05-01-title.md.
var datedName = regexp.MustCompile(`^(19|20)\d\d-\d\d-\d\d[-_]`)

// Of tells the origin of a document from its slash-separated path and its
// frontmatter (nil when it has none).
//
// The language is a frontmatter "lang", "language" or "locale" holding a
// language tag (not "go"), else a directory named by a language tag:
// with a region (zh-cn, pt_BR) anywhere; bare (ja) as the first directory
// or under content/, i18n/, locales/ and the like, or under docs/ and
// site/ unless it is also a common word (it, id, ml); else a file name's
// language suffix (README.ja.md, index.pt-br.md, README_zh-CN.md,
// README-ko.md). A post lives under blog/, news/ or posts/ at any level,
// is named for its date (2023-05-01-title.md), or says so in its
// frontmatter: type or layout blog, post or news, or both a date and an
// author.
func Of(p string, frontmatter map[string]any) Origin {
	var o Origin
	for _, key := range []string{"lang", "language", "locale"} {
		if s, ok := frontmatter[key].(string); ok {
			if l, _, ok := tag(s); ok {
				o.Lang = l
				break
			}
		}
	}
	dirs := strings.Split(path.Dir(p), "/")
	if dirs[0] == "." {
		dirs = nil
	}
	for i, d := range dirs {
		ld := strings.ToLower(d)
		if postDirs[ld] {
			o.Post = true
		}
		if o.Lang != "" {
			continue
		}
		if l, region, ok := tag(ld); ok {
			parent := ""
			if i > 0 {
				parent = strings.ToLower(dirs[i-1])
			}
			if region || strictParents[parent] || ((i == 0 || localeParents[parent]) && !ambiguous[ld]) {
				o.Lang = l
			}
		}
	}
	base := path.Base(p)
	if o.Lang == "" {
		o.Lang = nameLang(base)
	}
	if datedName.MatchString(base) {
		o.Post = true
	}
	for _, key := range []string{"type", "layout"} {
		if s, ok := frontmatter[key].(string); ok && postTypes[strings.ToLower(s)] {
			o.Post = true
		}
	}
	if frontmatter["date"] != nil && (frontmatter["author"] != nil || frontmatter["authors"] != nil) {
		o.Post = true
	}
	return o
}

// tag returns the primary subtag of a language tag ("pt-BR" → "pt"), and
// whether it has a region or script subtag.
func tag(s string) (primary string, region bool, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	primary, rest, hasRest := strings.Cut(strings.ReplaceAll(s, "_", "-"), "-")
	if !languages[primary] || (hasRest && !regionTag.MatchString(rest)) {
		return "", false, false
	}
	return primary, hasRest, true
}

// regionTag is a region or script subtag: us, br, 419, hans.
var regionTag = regexp.MustCompile(`^([a-z]{2}|[0-9]{3}|[a-z]{4})$`)

// Language suffixes of file names: a second extension (README.ja.md,
// index.pt-br.md), a tag with a region after a separator
// (README_zh-CN.md), or a bare code after one on a name that projects
// translate that way (README-ko.md).
var (
	dotSuffix    = regexp.MustCompile(`\.([a-z]{2,3}([-_]([a-z]{2}|[0-9]{3}|[a-z]{4}))?)$`)
	regionSuffix = regexp.MustCompile(`[-_]([a-z]{2,3}[-_]([a-z]{2}|[0-9]{3}|[a-z]{4}))$`)
	bareSuffix   = regexp.MustCompile(`^(readme|index|contributing|changelog|code_of_conduct|security|install|installation|faq)[-_]([a-z]{2,3})$`)
)

// nameLang is the language of a file name's suffix, "" when it has none.
func nameLang(base string) string {
	stem := strings.ToLower(strings.TrimSuffix(base, path.Ext(base)))
	if m := dotSuffix.FindStringSubmatch(stem); m != nil {
		if l, region, ok := tag(m[1]); ok && (region || !ambiguous[l]) {
			return l
		}
	}
	if m := regionSuffix.FindStringSubmatch(stem); m != nil {
		if l, _, ok := tag(m[1]); ok {
			return l
		}
	}
	if m := bareSuffix.FindStringSubmatch(stem); m != nil && !ambiguous[m[2]] && languages[m[2]] {
		return m[2]
	}
	return ""
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Asks is what a query asks for besides its subject.
type Asks struct {
	// Langs are the languages the query is written in or names.
	Langs map[string]bool
	// AllLangs is set when the query asks for translations as such.
	AllLangs bool
	// Posts is set when the query mentions a blog, news, a post or an
	// announcement.
	Posts bool
}

// Lang reports whether the query asks for documents in lang.
func (a Asks) Lang(lang string) bool { return a.AllLangs || a.Langs[lang] }

// scriptLangs are the languages written in a script.
var scriptLangs = []struct {
	table *unicode.RangeTable
	langs []string
}{
	{unicode.Hiragana, []string{"ja"}},
	{unicode.Katakana, []string{"ja"}},
	{unicode.Hangul, []string{"ko"}},
	{unicode.Han, []string{"zh", "ja"}},
	{unicode.Cyrillic, []string{"ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "mn", "tg"}},
	{unicode.Arabic, []string{"ar", "fa", "ur", "ps"}},
	{unicode.Hebrew, []string{"he"}},
	{unicode.Greek, []string{"el"}},
	{unicode.Thai, []string{"th"}},
	{unicode.Devanagari, []string{"hi", "mr", "ne"}},
	{unicode.Bengali, []string{"bn"}},
	{unicode.Tamil, []string{"ta"}},
	{unicode.Telugu, []string{"te"}},
	{unicode.Georgian, []string{"ka"}},
	{unicode.Armenian, []string{"hy"}},
}

// latinWords are common words of languages written in the Latin script,
// which tell a query's language when it has two of them.
var latinWords = map[string]map[string]bool{
	"en": setOf("the", "how", "what", "where", "when", "which", "why", "is", "are", "do", "does", "can", "to", "of", "and", "in", "for", "with", "i", "my", "you", "it", "this", "that"),
	"fr": setOf("le", "la", "les", "des", "une", "est", "sont", "comment", "pour", "dans", "avec", "sur", "quoi", "où", "pourquoi", "je", "nous", "vous", "ce", "cette", "du", "et", "un", "quel", "quelle"),
	"es": setOf("el", "los", "las", "una", "cómo", "qué", "para", "por", "con", "dónde", "cuál", "es", "del", "yo", "puedo", "y", "un", "en", "se"),
	"pt": setOf("o", "os", "uma", "não", "como", "para", "com", "onde", "qual", "eu", "posso", "do", "da", "dos", "das", "em", "é", "e", "um", "se"),
	"de": setOf("der", "die", "das", "und", "ist", "wie", "ich", "nicht", "mit", "ein", "eine", "kann", "wo", "was", "für", "den", "dem", "zu", "auf"),
	"it": setOf("il", "gli", "della", "come", "per", "con", "dove", "cosa", "che", "non", "sono", "posso", "e", "un", "una", "di", "del"),
	"nl": setOf("de", "het", "een", "hoe", "ik", "wat", "waar", "niet", "voor", "met", "kan", "en", "van", "is"),
}

// languageNames are names of languages, in English and in themselves, by
// which a query may ask for them ("the Japanese docs").
var languageNames = map[string]string{
	"english": "en", "japanese": "ja", "日本語": "ja", "chinese": "zh", "中文": "zh", "简体中文": "zh", "繁體中文": "zh",
	"korean": "ko", "한국어": "ko", "french": "fr", "français": "fr", "francais": "fr", "spanish": "es", "español": "es",
	"espanol": "es", "portuguese": "pt", "português": "pt", "portugues": "pt", "german": "de", "deutsch": "de",
	"italian": "it", "italiano": "it", "russian": "ru", "русский": "ru", "ukrainian": "uk", "українська": "uk",
	"polish": "pl", "polski": "pl", "dutch": "nl", "nederlands": "nl", "turkish": "tr", "türkçe": "tr",
	"vietnamese": "vi", "tiếng": "vi", "bengali": "bn", "বাংলা": "bn", "persian": "fa", "farsi": "fa", "فارسی": "fa",
	"hindi": "hi", "हिन्दी": "hi", "arabic": "ar", "العربية": "ar", "hebrew": "he", "swedish": "sv", "svenska": "sv",
	"romanian": "ro", "română": "ro", "czech": "cs", "čeština": "cs", "greek": "el", "thai": "th",
}

// postWords in a query ask for posts; translationWords for translations.
var (
	postWords        = setOf("blog", "blogs", "post", "posts", "news", "announcement", "announcements", "announced", "announcing", "announce")
	translationWords = setOf("translation", "translations", "translated", "localized", "localised", "localization", "localisation", "i18n", "l10n")
)

// AsksOf tells what query asks for besides its subject. Its languages are
// those of the scripts it is written in (Han counts as Chinese and
// Japanese), those it names, and for a query in the Latin script the
// language most of its common words belong to, English when none tells.
func AsksOf(query string) Asks {
	a := Asks{Langs: map[string]bool{}}
	latin := false
	for _, r := range query {
		if !unicode.IsLetter(r) {
			continue
		}
		if unicode.Is(unicode.Latin, r) {
			latin = true
			continue
		}
		for _, s := range scriptLangs {
			if unicode.Is(s.table, r) {
				for _, l := range s.langs {
					a.Langs[l] = true
				}
				break
			}
		}
	}
	counts := map[string]int{}
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) })
	for _, w := range words {
		if l, ok := languageNames[w]; ok {
			a.Langs[l] = true
		}
		a.Posts = a.Posts || postWords[w]
		a.AllLangs = a.AllLangs || translationWords[w]
		for l, set := range latinWords {
			if set[w] {
				counts[l]++
			}
		}
	}
	if latin {
		best, bestN := "en", counts["en"]
		for _, l := range []string{"fr", "es", "pt", "de", "it", "nl"} { // fixed order: ties go the same way every time
			if n := counts[l]; n >= 2 && n > bestN {
				best, bestN = l, n
			}
		}
		a.Langs[best] = true
	}
	return a
}
