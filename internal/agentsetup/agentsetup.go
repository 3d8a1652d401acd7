// Package agentsetup registers CueDeck with AI coding agents: it merges
// CueDeck's MCP server into Claude Code's project .mcp.json (the hooks are
// internal/hook's), and renders the equivalent snippets for other MCP
// clients. `cue setup` uses it.
package agentsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/cuedeck/cuedeck/internal/hook"
)

// ServerName is the name CueDeck's server is registered under.
const ServerName = "cuedeck"

// Server is how an agent reaches CueDeck's MCP server: a stdio command
// (Command and Args), or a team edge's Streamable HTTP endpoint (URL) with
// a bearer token read from the environment variable TokenEnv. The token
// itself is never written anywhere.
type Server struct {
	Command  string
	Args     []string
	URL      string
	TokenEnv string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports a server no client could use, or one that would put a
// secret into a file.
func (s Server) Validate() error {
	if s.URL == "" {
		if s.Command == "" {
			return errors.New("no command to run the MCP server with")
		}
		if s.TokenEnv != "" {
			return errors.New("--token-env applies to --http only: a stdio server reaches the local daemon without a token")
		}
		return nil
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--http %q: give the edge's MCP endpoint as http(s)://host[:port]/mcp", s.URL)
	}
	if u.User != nil {
		return fmt.Errorf("--http %q holds credentials; give the URL without them and the token's variable with --token-env", s.URL)
	}
	if s.TokenEnv != "" && !envName.MatchString(s.TokenEnv) {
		return fmt.Errorf("--token-env %q: give the name of an environment variable (letters, digits, _), not the token", s.TokenEnv)
	}
	return nil
}

// claudeEntry is the server's entry in Claude Code's mcpServers, which
// expands ${VAR} in url and headers when it starts the server.
func (s Server) claudeEntry() map[string]any {
	if s.URL == "" {
		return map[string]any{"type": "stdio", "command": s.Command, "args": s.args()}
	}
	e := map[string]any{"type": "http", "url": s.URL}
	if s.TokenEnv != "" {
		e["headers"] = map[string]any{"Authorization": "Bearer ${" + s.TokenEnv + "}"}
	}
	return e
}

func (s Server) args() []string {
	if s.Args == nil {
		return []string{}
	}
	return s.Args
}

// MergeMCPJSON returns Claude Code's project MCP config old (the file at
// path, named in errors; nil or blank for none) with CueDeck's server
// under mcpServers.cuedeck, and what happened to it: "added", "updated"
// or "unchanged". Other servers and keys are kept. When nothing changes,
// old itself is returned; otherwise the result is JSON with a 2-space
// indent. A config that is not a JSON object is an error.
func MergeMCPJSON(path string, old []byte, s Server) ([]byte, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &cfg); err != nil {
			return nil, "", fmt.Errorf("%s is not valid JSON (%v); fix or move it and run the command again (the file was not changed)", path, err)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := cfg["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, "", fmt.Errorf("%s: \"mcpServers\" is not an object of servers (%v); fix it and run the command again (the file was not changed)", path, err)
		}
	}
	want, err := hook.MarshalJSON(s.claudeEntry(), "")
	if err != nil {
		return nil, "", err
	}
	action := "added"
	if raw, ok := servers[ServerName]; ok {
		if sameJSON(raw, want) {
			return old, "unchanged", nil
		}
		action = "updated"
	}
	servers[ServerName] = want
	if cfg["mcpServers"], err = hook.MarshalJSON(servers, ""); err != nil {
		return nil, "", err
	}
	out, err := hook.MarshalJSON(cfg, "  ")
	if err != nil {
		return nil, "", err
	}
	return append(out, '\n'), action, nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Describe is the server in one line, for what setup prints.
func (s Server) Describe() string {
	if s.URL == "" {
		return strings.TrimSpace(s.Command + " " + strings.Join(s.args(), " "))
	}
	if s.TokenEnv == "" {
		return s.URL + " (no token)"
	}
	return s.URL + " (token from $" + s.TokenEnv + ")"
}

// Snippet is configuration for another MCP client, printed for the user to
// put where Where says.
type Snippet struct {
	Where string
	Text  string
}

// Cursor is the server in Cursor's mcp.json format, which expands
// ${env:VAR} in headers.
func Cursor(s Server) (Snippet, error) {
	if err := s.Validate(); err != nil {
		return Snippet{}, err
	}
	e := map[string]any{"command": s.Command, "args": s.args()}
	if s.URL != "" {
		e = map[string]any{"url": s.URL}
		if s.TokenEnv != "" {
			e["headers"] = map[string]any{"Authorization": "Bearer ${env:" + s.TokenEnv + "}"}
		}
	}
	text, err := indentJSON(map[string]any{"mcpServers": map[string]any{ServerName: e}})
	return Snippet{
		Where: "Merge into .cursor/mcp.json at the project root (this project) or ~/.cursor/mcp.json (every project), then enable the server in Cursor's MCP settings.",
		Text:  text,
	}, err
}

// Codex is the server as a table of Codex's config.toml, which reads a
// bearer token from the variable bearer_token_env_var names.
func Codex(s Server) (Snippet, error) {
	if err := s.Validate(); err != nil {
		return Snippet{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", ServerName)
	if s.URL == "" {
		fmt.Fprintf(&b, "command = %s\n", strconv.Quote(s.Command))
		quoted := make([]string, len(s.args()))
		for i, a := range s.args() {
			quoted[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
	} else {
		fmt.Fprintf(&b, "url = %s\n", strconv.Quote(s.URL))
		if s.TokenEnv != "" {
			fmt.Fprintf(&b, "bearer_token_env_var = %s\n", strconv.Quote(s.TokenEnv))
		}
	}
	return Snippet{
		Where: "Append to ~/.codex/config.toml (or .codex/config.toml in a trusted project); `codex mcp list` then shows it.",
		Text:  b.String(),
	}, nil
}

// GenericJSON is the server in the mcpServers JSON most MCP clients read.
// Clients differ in how they expand variables, so a token appears as a
// placeholder to replace with the client's syntax or the token.
func GenericJSON(s Server) (Snippet, error) {
	if err := s.Validate(); err != nil {
		return Snippet{}, err
	}
	e := map[string]any{"command": s.Command, "args": s.args()}
	where := "Merge into your MCP client's server list (the \"mcpServers\" object of its JSON config)."
	if s.URL != "" {
		e = map[string]any{"type": "http", "url": s.URL}
		if s.TokenEnv != "" {
			e["headers"] = map[string]any{"Authorization": "Bearer ${" + s.TokenEnv + "}"}
			where += " Replace ${" + s.TokenEnv + "} with your client's way of reading the variable " + s.TokenEnv + "; avoid pasting the token itself into a shared file."
		}
	}
	text, err := indentJSON(map[string]any{"mcpServers": map[string]any{ServerName: e}})
	return Snippet{Where: where, Text: text}, err
}

func indentJSON(v any) (string, error) {
	b, err := hook.MarshalJSON(v, "  ")
	return string(b) + "\n", err
}
