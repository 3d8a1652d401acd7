// Command cue-engine runs the commands of CueDeck's laptop CLI that need
// more than the standard library: it initialises a workspace, runs every
// role in one process on an embedded NATS server (`cue up`), serves MCP to
// an agent over stdio (`cue mcp`), and reports and stops the daemon. Users
// run it through the thin `cue` front (cmd/cue), which answers hooks
// itself and execs this binary for everything else.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

const usage = `cue — shared context and memory for AI coding agents

Usage:
  cue init   [--force]          create .cuedeck/{cards,docs}, config.toml; ignore the cache
  cue up     [--detach]         run the embedded node and every role on this workspace
  cue mcp                       serve MCP over stdio (starts the daemon if none runs)
  cue card new TITLE [--priority P] [--tags a,b] [--depends-on id,id] [--assignee X]
                                write a todo task card, print its path
  cue search QUERY [--mode M] [--limit N] [--repo R] [--json]
                                ranked hits as path:line with the heading and two lines, as
                                read_context answers an agent (starts the daemon if none runs)
  cue tasks  list|ready|blocked [--repo R] [--status S] [--json]
                                the task board through the running daemon: every task, those ready
                                (todo, every dependency done) or blocked (waiting on one)
  cue tasks  show ID | start ID | done ID | dep add|rm ID DEP
                                one task with its links; start or finish it; add or remove the edge
                                ID → DEP (a cycle exits 2) — written through the task log
  cue memories search QUERY | list | show HASH | forget HASH  [--kind K] [--repo R] [--json]
                                what agents remembered: ranked, newest first, one whole; forget one
                                (a tombstone: extraction does not bring it back)
  cue status [--verbose] [--json]
                                totals, rates and ETAs of indexing and vectors; what is skipped, lagging, dead-lettered
  cue down                      stop this workspace's daemon gracefully
  cue scene  [CARD_ID] [--token-limit N] [--dry-run|-d]
                                write the active card's scene to .cuedeck/SCENE.md and the clipboard
  cue watch  [CARD_ID] [--token-limit N]
                                re-render the scene on every change (debounced 500 ms)
  cue open   [QUERY] [--list]   fuzzy-find docs, headings and cards; Enter opens $EDITOR at the line
  cue doctor [--all]            check config, frontmatter, links, card cycles and the daemon (--all: every finding)
  cue clean                     remove the workspace cache (refused while a daemon runs)
  cue eval beir DIR [--modes M] [--work DIR] [--json]
                                search quality on a BEIR data set through a daemon, each document
                                a file, each query asked with read_context (nDCG@10, recall)
  cue bench --size 1k|10k|50k [--seed N] [--json FILE|-] [--out DIR] [--keep]
                                measure ingest, tools, hook and freshness on a generated corpus, beside ripgrep
  cue bench --repo DIR|goroot [--limit N] [--model M] [--embed-timeout D] [--json FILE|-]
                                measure cue up on a copy of a real repository: files/s to searchable and
                                embedded, peak RSS, cache size, cue down and restart, queries beside ripgrep
  cue bench --tasks [--clients 1,8,64] [--edges 1,2] [--second-edge daemon|mcp-edge] [--duration 30s]
                                many agents writing tasks through fresh daemons: create/update p50, p99,
                                writes/s, failures, and acknowledged writes lost or duplicated
  cue setup claude [--dry-run] [--http URL [--token-env NAME]]
                                register the MCP server (.mcp.json) and hooks (.claude/settings.json) for Claude Code
  cue setup cursor|codex|json   print the MCP server's config for another client, and where it goes
  cue hook install [--dry-run]  register CueDeck's Claude Code hooks in .claude/settings.json
  cue hook EVENT                answer a Claude Code hook (payload on stdin; what the hooks run)
  cue upgrade [--manifest URL] [--force] [--rollback]
                                install the newer release a manifest describes (--rollback: the previous binaries)
  cue version [--json]          version, commit, build date, Go version, embedding model

Every command takes --workspace DIR (default: the repository around the
current directory) and --log-level debug|info|warn|error.
`

// lockExitCode is the exit status of a command refused because another
// process holds the workspace lock (error 1007).
const lockExitCode = 7

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cue:", err)
		var le *workspace.LockError
		if errors.As(err, &le) {
			os.Exit(lockExitCode)
		}
		var ce *scenes.CycleError
		var te *tools.Error
		if errors.As(err, &ce) || errors.As(err, &te) && te.Code == tools.CodeCycle {
			os.Exit(2) // error 1002, as 1007 exits 7
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "init":
		return cmdInit(rest)
	case "up":
		return cmdUp(rest)
	case "mcp":
		return cmdMCP(rest)
	case "card":
		return cmdCard(rest)
	case "tasks":
		return cmdTasks(rest)
	case "search":
		return cmdSearch(rest)
	case "memories":
		return cmdMemories(rest)
	case "status":
		return cmdStatus(rest)
	case "down":
		return cmdDown(rest)
	case "scene":
		return cmdScene(rest)
	case "watch":
		return cmdWatch(rest)
	case "doctor":
		return cmdDoctor(rest)
	case "open":
		return cmdOpen(rest)
	case "clean":
		return cmdClean(rest)
	case "eval":
		return cmdEval(rest)
	case "bench":
		return cmdBench(rest)
	case "setup":
		return cmdSetup(rest)
	case "upgrade":
		return cmdUpgrade(rest)
	case "hook":
		// The front answers hooks itself; this keeps `cue-engine hook`
		// equivalent for anyone who runs the engine directly.
		if code := hook.Main(rest, hook.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Front: frontPath(), Engine: os.Executable}); code != 0 {
			os.Exit(code)
		}
		return nil
	case "version", "--version":
		return cmdVersion(rest)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}
