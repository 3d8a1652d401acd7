package workspace

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Config is .cuedeck/config.toml. Every field has a useful zero value;
// SetDefaults fills them and Validate says what is wrong and how to fix it.
type Config struct {
	Workspace WorkspaceConfig `toml:"workspace"`
	Repos     []RepoConfig    `toml:"repos"`
	Ingest    IngestConfig    `toml:"ingest"`
	NATS      NATSConfig      `toml:"nats"`
	MCP       MCPConfig       `toml:"mcp"`
	Scene     SceneConfig     `toml:"scene"`
	Embed     EmbedConfig     `toml:"embed"`
	// Transcripts and Extract turn agent transcripts into memories.
	Transcripts TranscriptsConfig `toml:"transcripts"`
	Extract     ExtractConfig     `toml:"extract"`
	Release     ReleaseConfig     `toml:"release"`
	Docs        DocsConfig        `toml:"docs"`
}

// DocsConfig describes how the workspace's docs link to each other, for
// `cue doctor`.
type DocsConfig struct {
	// SiteRoot is the directory, relative to the workspace root, that a
	// static site generator serves at the site's root ("content/en" or
	// "content" for Hugo): a site-absolute link such as /docs/foo/ is
	// then the page docs/foo.md, docs/foo/index.md or docs/foo/_index.md
	// under it. Empty: site-absolute links that are not workspace paths
	// are counted apart, not checked.
	SiteRoot string `toml:"site_root"`
}

// ReleaseConfig says where `cue upgrade` finds releases.
type ReleaseConfig struct {
	// ManifestURL is a release's manifest.json (`make release` writes
	// one); CUE_RELEASE_URL and `cue upgrade --manifest` override it.
	ManifestURL string `toml:"manifest_url"`
}

// TranscriptsConfig says which agent transcripts ingest tails. A transcript
// belongs to the repo whose path holds the working directory its lines
// report; others are ignored.
type TranscriptsConfig struct {
	// Disabled turns transcript tailing off.
	Disabled bool `toml:"disabled"`
	// ClaudeDirs are Claude Code's project directories; default
	// ["~/.claude/projects"].
	ClaudeDirs []string `toml:"claude_dirs"`
	// Chat are generic chat-JSONL transcripts: a glob and the repo they
	// belong to ("" maps each line's cwd).
	Chat []ChatTranscriptConfig `toml:"chat"`
}

// ChatTranscriptConfig is one source of generic chat-JSONL transcripts.
type ChatTranscriptConfig struct {
	Glob string `toml:"glob"`
	Repo string `toml:"repo"`
}

// ExtractConfig configures memory extraction from transcripts.
type ExtractConfig struct {
	// LLM is "none" (rule-based extraction only, the default: nothing to
	// set up) or "ollama:<model>", e.g. "ollama:qwen2.5:7b-instruct".
	LLM string `toml:"llm"`
	// OllamaHost is the Ollama server; empty: [embed] ollama_host, then
	// OLLAMA_HOST, else http://127.0.0.1:11434.
	OllamaHost string `toml:"ollama_host"`
	// DailyBudgetUSD caps the LLM spend per UTC day, shared by every
	// extractor; 0 disables the cap.
	DailyBudgetUSD float64 `toml:"daily_budget_usd"`
	// PriceInPerMTok and PriceOutPerMTok are the model's prices in USD per
	// million prompt and output tokens (0 for a local model).
	PriceInPerMTok  float64 `toml:"price_in_per_mtok"`
	PriceOutPerMTok float64 `toml:"price_out_per_mtok"`
	// CallTimeout bounds one LLM request; default 2m.
	CallTimeout Duration `toml:"call_timeout"`
}

// EmbedConfig chooses the embedding model for semantic search. Keyword
// search works whatever it says.
type EmbedConfig struct {
	// Model is "builtin" (the default: built into the binary, no setup),
	// "ollama:<model>" (e.g. "ollama:all-minilm") or "none" (keyword
	// search only).
	Model string `toml:"model"`
	// OllamaHost is the Ollama server for "ollama:" models; empty:
	// OLLAMA_HOST, else http://127.0.0.1:11434.
	OllamaHost string `toml:"ollama_host"`
	// Files is which files are embedded: "prose" (markdown, cards, text
	// documents; code and data are then found by keyword search alone) or
	// "all". Empty: "prose" with the built-in model, which reads prose and
	// is near random on code; "all" with an Ollama model
	// (embedworker.ProseOnlyByDefault).
	Files string `toml:"files"`
	// Cores is how many cores the built-in model embeds on at once; 0:
	// every core but one (at least one), so that a query never waits for
	// a core (priority.DefaultBackgroundCores). Embedding runs only while
	// the daemon has no indexing, applying or answering to do, whatever
	// this says.
	Cores int `toml:"cores"`
}

// ProseOnly resolves Files: byDefault is what the model does when unset.
func (c EmbedConfig) ProseOnly(byDefault bool) bool {
	if c.Files == "" {
		return byDefault
	}
	return c.Files == "prose"
}

// WorkspaceConfig names the workspace's own repository.
type WorkspaceConfig struct {
	// Name is the repo name of the workspace root; default: the directory
	// name made subject-safe.
	Name string `toml:"name"`
}

// RepoConfig is a further repository to ingest beside the workspace root.
type RepoConfig struct {
	Name string `toml:"name"`
	// Path is absolute or relative to the workspace root.
	Path string `toml:"path"`
}

// IngestConfig tunes what ingest reads.
type IngestConfig struct {
	Exclude      []string `toml:"exclude"`
	MaxFileBytes int64    `toml:"max_file_bytes"`
	InlineBytes  int64    `toml:"inline_bytes"`
	Debounce     Duration `toml:"debounce"`
}

// NATSConfig says which NATS to use.
type NATSConfig struct {
	// URL of a NATS cluster; empty runs an embedded server.
	URL string `toml:"url"`
	// SyncAlways makes every JetStream write durable before it is
	// acknowledged onward (embedded server; bus.EmbeddedConfig says how).
	// Default true; a nil pointer means default.
	SyncAlways *bool `toml:"sync_always"`
	// Listen is the embedded server's client address; default 127.0.0.1
	// on a free port.
	Listen string `toml:"listen"`
	// LeafRemotes join the embedded server to team clusters.
	LeafRemotes []string `toml:"leaf_remotes"`
	// TeamQueryPrefix is the query prefix of the team's edges (their
	// --query-prefix), which `cue mcp` asks first when LeafRemotes are
	// set; default "cue.query". The daemon then answers on "cue.local".
	TeamQueryPrefix string `toml:"team_query_prefix"`
	Credentials     string `toml:"credentials"`
	// Replicas of streams and buckets this workspace provisions: 1 on the
	// embedded server, 3 on a team cluster.
	Replicas int `toml:"replicas"`
	// QueueMaxBytes caps each of the ingest and embed queues. 0: an
	// eighth of the free disk space, at most 2 GiB, for the embedded
	// server (bus.QueueMaxBytesFor); 2 GiB on a cluster.
	QueueMaxBytes int64 `toml:"queue_max_bytes"`
}

// MinQueueMaxBytes is the smallest [nats] queue_max_bytes: one large
// file's event must fit (bus.MinConfiguredQueueMaxBytes, which the daemon's
// tests hold equal; this package stays free of NATS).
const MinQueueMaxBytes = 16 << 20

// MCPConfig configures the daemon's MCP HTTP endpoint.
type MCPConfig struct {
	// HTTPAddr to listen on; default 127.0.0.1:0 (a free port, written to
	// the daemon file). Set "" with HTTPDisabled to turn it off.
	HTTPAddr     string `toml:"http_addr"`
	HTTPDisabled bool   `toml:"http_disabled"`
	// AllowedOrigins are browser origins admitted besides the server's
	// own (e.g. "https://dash.team.example").
	AllowedOrigins []string `toml:"allowed_origins"`
	// Tokens authenticate HTTP and NATS tool calls; with any configured,
	// every call needs one, and a non-loopback http_addr needs them.
	Tokens []access.TokenConfig `toml:"tokens"`
	// RateLimitsMode says whether seed 002 §6's per-tool, per-client
	// limits apply: "auto" (the default) applies them, per token, when
	// tokens are configured (a team edge) or limits overridden, and not
	// on a laptop's daemon, whose one user's agents would only be slowed;
	// "on" and "off" decide. RateLimits override the table, tool by tool.
	// RateLimitsDisabled (older configs) is "off".
	RateLimitsMode     string                     `toml:"rate_limits_mode"`
	RateLimits         map[string]RateLimitConfig `toml:"rate_limits"`
	RateLimitsDisabled bool                       `toml:"rate_limits_disabled"`
	// QueryToken is sent with `cue mcp`'s calls, for team edges (reached
	// through a leaf node) that require a token; CUE_TOKEN overrides it.
	QueryToken string `toml:"query_token"`
}

// RateLimitsOn reports whether the per-tool limits apply (see
// RateLimitsMode).
func (c MCPConfig) RateLimitsOn() bool {
	switch {
	case c.RateLimitsDisabled || c.RateLimitsMode == "off":
		return false
	case c.RateLimitsMode == "on":
		return true
	}
	return len(c.Tokens) > 0 || len(c.RateLimits) > 0
}

// RateLimitConfig is one tool's limit: Limit calls per Window sustained,
// Burst at once (default Limit).
type RateLimitConfig struct {
	Limit  int      `toml:"limit"`
	Burst  int      `toml:"burst"`
	Window Duration `toml:"window"`
}

// RateRules are the limits in force: nil when disabled, else seed 002's
// table with the configured overrides.
func (c MCPConfig) RateRules() map[string]resilience.RateRule {
	if !c.RateLimitsOn() {
		return nil
	}
	rules := resilience.DefaultRateRules()
	for tool, r := range c.RateLimits {
		w := r.Window.Duration
		if w == 0 {
			w = time.Minute
		}
		rules[tool] = resilience.RateRule{Limit: r.Limit, Burst: r.Burst, Window: w}
	}
	return rules
}

// SceneConfig holds scene defaults.
type SceneConfig struct {
	TokenLimit int `toml:"token_limit"`
}

// Duration is a time.Duration written as "500ms" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: use a Go duration such as 500ms or 2s", b)
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// SetDefaults fills unset fields; root is the workspace root.
func (c *Config) SetDefaults(root string) {
	if c.Workspace.Name == "" {
		c.Workspace.Name = events.RepoNameFrom(filepath.Base(root))
	}
	if c.Ingest.MaxFileBytes == 0 {
		c.Ingest.MaxFileBytes = 8 << 20
	}
	if c.Ingest.InlineBytes == 0 {
		c.Ingest.InlineBytes = 256 << 10
	}
	if c.Ingest.Debounce.Duration == 0 {
		c.Ingest.Debounce.Duration = 500 * time.Millisecond
	}
	if c.NATS.SyncAlways == nil {
		on := true
		c.NATS.SyncAlways = &on
	}
	if c.NATS.Replicas == 0 {
		c.NATS.Replicas = 1
	}
	if c.MCP.HTTPAddr == "" && !c.MCP.HTTPDisabled {
		c.MCP.HTTPAddr = "127.0.0.1:0"
	}
	if c.Scene.TokenLimit == 0 {
		c.Scene.TokenLimit = 32000
	}
	if strings.TrimSpace(c.Embed.Model) == "" {
		c.Embed.Model = provider.Builtin
	}
	if len(c.Transcripts.ClaudeDirs) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			c.Transcripts.ClaudeDirs = []string{filepath.Join(home, ".claude", "projects")}
		}
	}
	for i, d := range c.Transcripts.ClaudeDirs {
		c.Transcripts.ClaudeDirs[i] = expandHome(d)
	}
	for i := range c.Transcripts.Chat {
		g := expandHome(c.Transcripts.Chat[i].Glob)
		if g != "" && !filepath.IsAbs(g) {
			g = filepath.Join(root, g)
		}
		c.Transcripts.Chat[i].Glob = g
	}
	if strings.TrimSpace(c.Extract.LLM) == "" {
		c.Extract.LLM = "none"
	}
	if c.Extract.OllamaHost == "" {
		c.Extract.OllamaHost = c.Embed.OllamaHost
	}
	if c.Extract.CallTimeout.Duration == 0 {
		c.Extract.CallTimeout.Duration = 2 * time.Minute
	}
	for i := range c.Repos {
		if c.Repos[i].Path != "" && !filepath.IsAbs(c.Repos[i].Path) {
			c.Repos[i].Path = filepath.Join(root, c.Repos[i].Path)
		}
	}
}

// Validate reports the first problem, naming the config key.
func (c *Config) Validate() error {
	if err := events.ValidateRepo(c.Workspace.Name); err != nil {
		return fmt.Errorf("config [workspace] name: %w", err)
	}
	seen := map[string]bool{c.Workspace.Name: true}
	for i, r := range c.Repos {
		if err := events.ValidateRepo(r.Name); err != nil {
			return fmt.Errorf("config [[repos]] #%d name: %w", i+1, err)
		}
		if seen[r.Name] {
			return fmt.Errorf("config [[repos]] #%d: repo name %q is used twice; give each repository its own name", i+1, r.Name)
		}
		seen[r.Name] = true
		if st, err := os.Stat(r.Path); err != nil || !st.IsDir() {
			return fmt.Errorf("config [[repos]] %q: path %s is not a directory", r.Name, r.Path)
		}
	}
	if c.NATS.URL == "" && c.NATS.Replicas != 1 {
		return fmt.Errorf("config [nats] replicas = %d needs a cluster: the embedded server is a single node (set url, or replicas = 1)", c.NATS.Replicas)
	}
	if q := c.NATS.QueueMaxBytes; q != 0 && q < MinQueueMaxBytes {
		return fmt.Errorf("config [nats] queue_max_bytes = %d: use 0 (sized from the free disk space) or at least %d (16 MiB)", q, MinQueueMaxBytes)
	}
	if p := c.NATS.TeamQueryPrefix; p != "" {
		for tok := range strings.SplitSeq(p, ".") {
			if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
				return fmt.Errorf("config [nats] team_query_prefix %q: use a subject prefix without wildcards or empty tokens, e.g. \"cue.query\"", p)
			}
		}
	}
	if c.Ingest.InlineBytes > c.Ingest.MaxFileBytes {
		return fmt.Errorf("config [ingest] inline_bytes (%d) exceeds max_file_bytes (%d)", c.Ingest.InlineBytes, c.Ingest.MaxFileBytes)
	}
	if _, err := provider.ModelID(c.Embed.Model); err != nil {
		return fmt.Errorf("config [embed] model: %w", err)
	}
	if f := c.Embed.Files; f != "" && f != "prose" && f != "all" {
		return fmt.Errorf(`config [embed] files = %q: use "prose" (markdown, cards, text documents) or "all"`, f)
	}
	if c.Embed.Cores < 0 {
		return fmt.Errorf("config [embed] cores = %d: use a number of cores, or 0 for every core but one", c.Embed.Cores)
	}
	if _, _, err := ParseLLM(c.Extract.LLM); err != nil {
		return fmt.Errorf("config [extract] llm: %w", err)
	}
	for name, v := range map[string]float64{"daily_budget_usd": c.Extract.DailyBudgetUSD, "price_in_per_mtok": c.Extract.PriceInPerMTok, "price_out_per_mtok": c.Extract.PriceOutPerMTok} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("config [extract] %s = %v: use a finite amount of dollars, 0 or more", name, v)
		}
	}
	for i, ch := range c.Transcripts.Chat {
		if ch.Glob == "" {
			return fmt.Errorf("config [[transcripts.chat]] #%d: glob is empty (e.g. glob = \"logs/agents/*.jsonl\")", i+1)
		}
		if _, err := filepath.Match(ch.Glob, ""); err != nil {
			return fmt.Errorf("config [[transcripts.chat]] #%d glob %q: %w", i+1, ch.Glob, err)
		}
		if ch.Repo != "" && !seen[ch.Repo] {
			return fmt.Errorf("config [[transcripts.chat]] #%d repo %q is not a repo of this workspace (use %q or a [[repos]] name)", i+1, ch.Repo, c.Workspace.Name)
		}
	}
	if _, err := access.NewTokens(c.MCP.Tokens); err != nil {
		return fmt.Errorf("config [[mcp.tokens]] %w", err)
	}
	for _, t := range c.MCP.Tokens {
		for _, r := range t.Repos {
			if err := events.ValidateRepo(r); r != "*" && err != nil {
				return fmt.Errorf("config [[mcp.tokens]] %q repos: %w", t.Name, err)
			}
		}
	}
	if !c.MCP.HTTPDisabled && !access.IsLoopback(c.MCP.HTTPAddr) && len(c.MCP.Tokens) == 0 {
		return fmt.Errorf("config [mcp] http_addr %s is reachable from other machines: add [[mcp.tokens]], or bind 127.0.0.1", c.MCP.HTTPAddr)
	}
	switch c.MCP.RateLimitsMode {
	case "", "auto", "on", "off":
	default:
		return fmt.Errorf(`config [mcp] rate_limits_mode = %q: use "auto" (limits per token when tokens are configured), "on" or "off"`, c.MCP.RateLimitsMode)
	}
	for tool, r := range c.MCP.RateLimits {
		if tools.Lookup(tool) == nil {
			return fmt.Errorf("config [mcp.rate_limits] %q is not a tool (e.g. read_context, read_doc, list_tasks)", tool)
		}
		if r.Limit < 1 || r.Burst < 0 || r.Window.Duration < 0 {
			return fmt.Errorf("config [mcp.rate_limits.%s]: limit must be 1 or more, burst 0 or more, window positive (e.g. limit = 10, burst = 15, window = \"60s\")", tool)
		}
	}
	if r := c.Docs.SiteRoot; r != "" {
		clean := path.Clean(filepath.ToSlash(r))
		if path.IsAbs(clean) || filepath.IsAbs(r) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("config [docs] site_root %q: give a directory inside the workspace, relative to its root (e.g. \"content/en\")", r)
		}
	}
	if c.Ingest.InlineBytes > 1<<20 {
		return fmt.Errorf("config [ingest] inline_bytes %d: at most 1 MiB travels inline (NATS payload limit); larger files go through the object store anyway", c.Ingest.InlineBytes)
	}
	return nil
}

// ParseLLM splits an [extract] llm value into provider and model:
// ("none", "") or ("ollama", model).
func ParseLLM(v string) (providerName, model string, err error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == "none":
		return "none", "", nil
	case strings.HasPrefix(v, "ollama:") && len(v) > len("ollama:"):
		return "ollama", strings.TrimPrefix(v, "ollama:"), nil
	}
	return "", "", fmt.Errorf("%q: use \"none\" (rule-based extraction) or \"ollama:<model>\", e.g. \"ollama:qwen2.5:7b-instruct\"", v)
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// LoadConfig reads the workspace's config.toml (absent is fine: defaults),
// applies defaults and validates.
func (w *Workspace) LoadConfig() (*Config, error) {
	var c Config
	path := w.Path(ConfigFile)
	md, err := toml.DecodeFile(path, &c)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("%s: line %d: %s (fix the file, or recreate it with `cue init --force`)", path, perr.Position.Line, perr.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	default:
		if undec := md.Undecoded(); len(undec) > 0 {
			return nil, fmt.Errorf("%s: unknown key %q (check the spelling; `cue init --force` writes a commented default)", path, undec[0].String())
		}
	}
	c.SetDefaults(w.Root)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// DefaultConfigTOML is the commented config `cue init` writes.
func DefaultConfigTOML(dirName string) string {
	return fmt.Sprintf(`# CueDeck workspace configuration.

[workspace]
# Repo name of this workspace in events and search results.
name = %q

[ingest]
# gitignore-style patterns skipped in every repository, besides .gitignore.
exclude = []
# Files larger than this are skipped (and reported by `+"`cue status`"+`).
max_file_bytes = 8388608
# Files up to this size travel inline; larger ones through the object store.
inline_bytes = 262144
# Quiet time after the last write before a changed file is published.
debounce = "500ms"

# Further repositories to index beside this one:
# [[repos]]
# name = "api"
# path = "../api"

[nats]
# Empty: run an embedded NATS server in the workspace cache.
url = ""
# Every JetStream write on disk before anything acknowledges it onward
# (off: a crash of the process still loses nothing, a power cut may).
sync_always = true
# Join a team cluster as a leaf node, e.g.
# ["nats-leaf://laptop:PASSWORD@nats.team:7422"]: this workspace's files
# reach the team's index, and `+"`cue mcp`"+` asks the team's edges first (this
# daemon answers when none does, e.g. offline).
leaf_remotes = []
# Query prefix of the team's edges (their --query-prefix).
team_query_prefix = "cue.query"
# Replicas of streams and buckets: 1 embedded, 3 on a team cluster.
replicas = 1
# Bytes each of the ingest and embed queues may hold; 0 sizes them from the
# free disk space (an eighth each, at most 2 GiB).
queue_max_bytes = 0

[mcp]
# MCP over Streamable HTTP; port 0 picks a free port (see `+"`cue status`"+`).
# Any address other than loopback needs tokens.
http_addr = "127.0.0.1:0"
# Browser origins allowed besides the server's own; others get 403.
allowed_origins = []
# Seed 002's per-tool, per-client limits: "auto" applies them, per token,
# when tokens are configured (a team edge), and not to a laptop's own
# agents; "on" or "off" decide. Override one tool with e.g.
# [mcp.rate_limits.read_context] limit = 60, burst = 90, window = "60s".
rate_limits_mode = "auto"
# Token `+"`cue mcp`"+` sends with its calls, for team edges that require one
# (CUE_TOKEN overrides it).
query_token = ""
# Bearer tokens for HTTP and NATS tool calls; each names the repos it may
# read (["*"]: all). With any token set, every call needs one.
# [[mcp.tokens]]
# name = "ci"
# sha256 = "<hex digest of the secret: printf %%s SECRET | sha256sum>"
# repos = ["app"]

[scene]
token_limit = 32000

[embed]
# Embedding model for semantic search: "builtin" (no setup), "ollama:<model>"
# (e.g. "ollama:all-minilm"), "static:<absolute path>" (a model `+"`cue eval train`"+`
# wrote), a prose model and a code model joined by "+code=" (e.g.
# "builtin+code=static:<absolute path>": each file embedded by its kind's
# model) or "none" (keyword search only). Keyword search
# never waits for embeddings; `+"`cue status`"+` shows how far they trail.
model = "builtin"
# Ollama server for "ollama:" models; empty: OLLAMA_HOST or 127.0.0.1:11434.
ollama_host = ""
# Which files are embedded: "prose" (markdown, cards, text documents; code
# and data are found by keyword search) or "all". Unset: "prose" with the
# built-in model, which reads prose and is near random on code (a repository
# of code then embeds in a fraction of the time and disk); "all" with
# the other models.
# files = "all"
# How many cores the built-in model embeds on at once; 0:
# every core but one, which a query takes the moment it arrives. Embedding
# runs only while nothing is indexed or answered; `+"`cue status`"+` shows the
# CPU time it has spent.
# cores = 0

[transcripts]
# Agent transcripts to learn from; a transcript belongs to the repo holding
# the working directory it reports.
disabled = false
# Claude Code's session transcripts (default ~/.claude/projects).
# claude_dirs = ["~/.claude/projects"]
# Generic chat JSONL, one {"role", "content", ...} message per line:
# [[transcripts.chat]]
# glob = "logs/agents/*.jsonl"
# repo = ""

[extract]
# "none": rule-based extraction of decisions and rationales (no setup);
# "ollama:<model>": an Ollama model extracts decisions, rationales, facts,
# preferences and open questions, with rules as the fallback.
llm = "none"
ollama_host = ""
# LLM spend cap per UTC day shared by all extractors (0: no cap), and the
# model's prices in USD per million tokens (0 for a local model).
daily_budget_usd = 0
price_in_per_mtok = 0
price_out_per_mtok = 0
call_timeout = "2m"

[docs]
# For `+"`cue doctor`"+`: the directory a static site generator serves at the
# site's root, e.g. "content/en" or "content" for Hugo. A site-absolute
# link such as /docs/foo/ is then checked as the page docs/foo.md,
# docs/foo/index.md or docs/foo/_index.md under it, anchors included.
# Empty: such links are counted apart, not checked.
site_root = ""

[release]
# manifest.json of the release `+"`cue upgrade`"+` installs. --manifest and
# CUE_RELEASE_URL override it; left empty, [release] manifest_url in the
# user's config (~/.config/cuedeck/config.toml) applies.
manifest_url = ""
`, events.RepoNameFrom(dirName))
}
