package origin

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		path string
		fm   map[string]any
		want Origin
	}{
		{"content/en/docs/collector/configuration.md", nil, Origin{Lang: "en"}},
		{"content/ja/docs/collector/configuration.md", nil, Origin{Lang: "ja"}},
		{"content/zh/docs/concepts/sampling.md", nil, Origin{Lang: "zh"}},
		{"website/i18n/zh-cn/docusaurus-plugin-content-docs/current/intro.md", nil, Origin{Lang: "zh"}},
		{"src/pt_BR/guide.md", nil, Origin{Lang: "pt"}},
		{"docs/fr/index.md", nil, Origin{Lang: "fr"}},
		{"ja/guide/index.md", nil, Origin{Lang: "ja"}},
		{"README.ja.md", nil, Origin{Lang: "ja"}},
		{"docs/index.pt-br.md", nil, Origin{Lang: "pt"}},
		{"README_zh-CN.md", nil, Origin{Lang: "zh"}},
		{"README-ko.md", nil, Origin{Lang: "ko"}},
		{"content/it/docs/intro.md", nil, Origin{Lang: "it"}},
		{"docs/guide.md", map[string]any{"lang": "ja-JP"}, Origin{Lang: "ja"}},
		{"docs/guide.md", map[string]any{"locale": "de_DE"}, Origin{Lang: "de"}},
		// Not languages: code words, a programming language, a file name.
		{"internal/it/README.md", nil, Origin{}},
		{"docs/ml/training.md", nil, Origin{}},
		{"id/README.md", nil, Origin{}},
		{"docs/setup-go.md", nil, Origin{}},
		{"docs/release.notes.md", nil, Origin{}},
		{"examples/grpc.md", map[string]any{"language": "go"}, Origin{}},
		{"docs/tail-sampling.md", nil, Origin{}},
		// Posts.
		{"content/en/blog/2023/tail-sampling.md", nil, Origin{Lang: "en", Post: true}},
		{"website/src/latest/blog/any-variables.md", nil, Origin{Post: true}},
		{"_posts/2023-05-01-release.md", nil, Origin{Post: true}},
		{"articles/2023-05-01-release.md", nil, Origin{Post: true}},
		{"docs/news.md", map[string]any{"layout": "post"}, Origin{Post: true}},
		{"docs/guide.md", map[string]any{"date": "2024-05-09", "author": "pd93"}, Origin{Post: true}},
		{"docs/guide.md", map[string]any{"date": "2024-05-09"}, Origin{}},
		{"content/ja/news/release.md", nil, Origin{Lang: "ja", Post: true}},
	} {
		if got := Of(c.path, c.fm); got != c.want {
			t.Errorf("Of(%q, %v) = %+v, want %+v", c.path, c.fm, got, c.want)
		}
	}
}

func TestAsksOf(t *testing.T) {
	for _, c := range []struct {
		query    string
		lang     string
		asks     bool
		posts    bool
		allLangs bool
	}{
		{"how do I configure the tail sampling processor", "en", true, false, false},
		{"tail sampling", "en", true, false, false},
		{"tail sampling", "ja", false, false, false},
		{"テールサンプリングの設定", "ja", true, false, false},
		{"尾部采样处理器", "zh", true, false, false},
		{"尾部采样处理器", "en", false, false, false},
		{"как настроить сэмплирование", "ru", true, false, false},
		{"comment configurer le processeur de tail sampling", "fr", true, false, false},
		{"cómo configurar el procesador", "es", true, false, false},
		{"the Japanese docs on sampling", "ja", true, false, false},
		{"tail sampling blog post", "en", true, true, false},
		{"what was announced about sampling", "en", true, true, false},
		{"translations of the sampling page", "zh", true, false, true},
	} {
		a := AsksOf(c.query)
		if a.Lang(c.lang) != c.asks || a.Posts != c.posts || a.AllLangs != c.allLangs {
			t.Errorf("AsksOf(%q) = %+v: Lang(%s) = %v (want %v), posts %v (want %v)", c.query, a, c.lang, a.Lang(c.lang), c.asks, a.Posts, c.posts)
		}
	}
}

func FuzzOf(f *testing.F) {
	f.Add("content/ja/docs/a.md", "zh-Hans")
	f.Add("README_pt-BR.md", "")
	f.Fuzz(func(t *testing.T, p, lang string) {
		o := Of(p, map[string]any{"lang": lang})
		if o.Lang != "" && !languages[o.Lang] {
			t.Fatalf("Of(%q, lang %q) = %+v: not a language", p, lang, o)
		}
		AsksOf(p + " " + lang)
	})
}
