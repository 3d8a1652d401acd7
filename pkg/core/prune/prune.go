package prune

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// ErrInvalidConfig is returned by New for a configuration it cannot run with.
var ErrInvalidConfig = errors.New("prune: invalid config")

// Config is the auto-supersede configuration. Its zero value is the seed's
// defaults with no extra protection.
type Config struct {
	// Tools names the tools and parameters; the zero value means SeedTools.
	Tools Tools

	// ProtectedTools are never superseded (config protectedTools). They
	// still supersede other calls.
	ProtectedTools []string
	// ProtectedTurns are turns whose calls are never superseded.
	ProtectedTurns []int
	// ProtectRecentTurns protects the calls of the last N turns, the
	// current one included: a call is protected when
	// currentTurn − turn < N. Calls of the current turn (and of any later
	// turn) are protected whatever N is.
	ProtectRecentTurns int

	TodoReminder TodoReminderConfig

	// CountTokens counts an output's tokens; nil means tokens.Count.
	CountTokens func(string) int
}

// TodoReminderConfig is config tools.todoReminder. Zero fields take the
// seed's defaults (8, 4, 12); the reminder is on unless Disabled (the
// config's enabled: false).
type TodoReminderConfig struct {
	Disabled bool
	// InitialTurns is how many turns without a todowrite pass before the
	// first reminder; RepeatTurns is the interval of the reminders after
	// it.
	InitialTurns int
	RepeatTurns  int
	// StuckTaskTurns is how long a task may stay in_progress before the
	// reminder carries the task breakdown suggestion.
	StuckTaskTurns int
}

func (c *TodoReminderConfig) setDefaults() {
	if c.InitialTurns == 0 {
		c.InitialTurns = 8
	}
	if c.RepeatTurns == 0 {
		c.RepeatTurns = 4
	}
	if c.StuckTaskTurns == 0 {
		c.StuckTaskTurns = 12
	}
}

func (c *Config) setDefaults() {
	if c.Tools.isZero() {
		c.Tools = SeedTools()
	}
	c.TodoReminder.setDefaults()
	if c.CountTokens == nil {
		c.CountTokens = tokens.Count
	}
}

// Validate reports negative turn counts as ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.ProtectRecentTurns < 0:
		return fmt.Errorf("%w: ProtectRecentTurns %d < 0", ErrInvalidConfig, c.ProtectRecentTurns)
	case c.TodoReminder.InitialTurns < 0, c.TodoReminder.RepeatTurns < 0, c.TodoReminder.StuckTaskTurns < 0:
		return fmt.Errorf("%w: todoReminder turns must not be negative", ErrInvalidConfig)
	}
	return nil
}

// Pruner runs auto-supersede over a conversation's tool calls. It holds
// only configuration, so one Pruner may serve many conversations and
// goroutines at once.
type Pruner struct {
	cfg            Config
	roles          map[string]role
	protectedTools map[string]bool
	protectedTurns map[int]bool
}

// New returns a Pruner for cfg. If cfg is invalid (negative turn counts, a
// tool name given two roles), an error wrapping ErrInvalidConfig is returned.
func New(cfg Config) (*Pruner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	roles, err := cfg.Tools.roles()
	if err != nil {
		return nil, err
	}
	p := &Pruner{cfg: cfg, roles: roles, protectedTools: map[string]bool{}, protectedTurns: map[int]bool{}}
	for _, t := range cfg.ProtectedTools {
		p.protectedTools[t] = true
	}
	for _, t := range cfg.ProtectedTurns {
		p.protectedTurns[t] = true
	}
	return p, nil
}

// FileKey returns the seed's file key of c: the file path for read, write
// and edit, glob:{path}:{pattern} for glob, grep:{path}:{pattern}:{include}
// for grep, and "" for other tools or a read/write/edit without a path.
func (p *Pruner) FileKey(c ToolCall) string {
	return p.cfg.Tools.fileKey(p.roles[c.Tool], c.Params)
}

// Result is what one Supersede run did.
type Result struct {
	// Superseded lists the calls pruned by this run, in the order the rules
	// pruned them.
	Superseded []Supersession
	// Stats tallies this run's supersessions; add it to a conversation's
	// running total with Stats.Add.
	Stats Stats
	// Log holds one line per supersession in the seed's log format.
	Log []string
	// Todos is the todo list after the latest todowrite, with
	// inProgressSince tracked.
	Todos TodoState
}

// Supersede runs auto-supersede over calls, which must be the whole
// conversation so far in order (calls superseded earlier included: they are
// the history that inProgressSince is derived from). It marks superseded
// calls in place, in the seed's order:
//
//  1. hash: a completed call supersedes the previous completed call with the
//     same tool and identical params;
//  2. file: a completed write or edit supersedes the earlier read, write and
//     edit calls with the same file key;
//  3. todo: the latest completed todowrite supersedes the earlier ones, and
//     the latest completed todoread the earlier todoreads;
//  4. in_progress tracking of the todos for stuck-task detection.
//
// A call is superseded only if it is completed, not yet superseded, not of a
// protected tool, and not in the current turn, a protected turn or a recent
// turn. Running Supersede again on the same calls changes nothing and
// reports nothing.
func (p *Pruner) Supersede(calls []ToolCall, currentTurn int) Result {
	var res Result
	p.supersedeByHash(calls, currentTurn, &res)
	p.supersedeByFile(calls, currentTurn, &res)
	p.supersedeTodos(calls, currentTurn, &res)
	res.Todos = p.trackTodos(calls)
	return res
}

// prunable applies the protection rules to c.
func (p *Pruner) prunable(c *ToolCall, currentTurn int) bool {
	switch {
	case c.Superseded, c.Status != StatusCompleted:
		return false
	case c.Turn >= currentTurn, currentTurn-c.Turn < p.cfg.ProtectRecentTurns:
		return false
	case p.protectedTurns[c.Turn], p.protectedTools[c.Tool]:
		return false
	}
	return true
}

func (p *Pruner) supersede(old, by *ToolCall, reason Reason, key string, res *Result) {
	old.Superseded = true
	old.SupersededBy = by.ID
	old.Reason = reason
	n := old.OutputTokens
	if n <= 0 {
		n = p.cfg.CountTokens(old.Output)
	}
	res.Superseded = append(res.Superseded, Supersession{
		ID: old.ID, Tool: old.Tool, By: by.ID, ByTool: by.Tool, Reason: reason, Key: key, Tokens: n,
	})
	res.Stats.tally(reason).add(n)
	var line string
	switch reason {
	case ReasonHash:
		line = fmt.Sprintf("[auto-supersede] 🔄 hash %s: %s → %s", key, old.ID, by.ID)
	case ReasonFile:
		line = fmt.Sprintf("[auto-supersede] 📝 file %s: %s %s superseded by %s", key, old.Tool, old.ID, by.Tool)
	case ReasonTodo:
		line = fmt.Sprintf("[auto-supersede] ✅ todo: pruned old %s %s", old.Tool, old.ID)
	}
	res.Log = append(res.Log, line)
}

// shortHash is the six-character form of a call hash shown in logs.
func shortHash(h string) string { return h[:6] }

// CallHash returns the hex SHA-256 of tool, a NUL byte and the canonical
// JSON of params (encoding/json: object keys sorted, nil params as {}). Two
// calls hash alike exactly when the tool and every parameter are the same.
// Params that cannot be encoded as JSON return the encoder's error.
func CallHash(tool string, params map[string]any) (string, error) {
	if params == nil {
		params = map[string]any{}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (p *Pruner) supersedeByHash(calls []ToolCall, currentTurn int, res *Result) {
	waiting := make(map[string][]int, len(calls))
	for j := range calls {
		c := &calls[j]
		if c.Hash == "" {
			h, err := CallHash(c.Tool, c.Params)
			if err != nil {
				continue // unhashable params take no part in the hash rule
			}
			c.Hash = h
		}
		p.supersedeWaiting(calls, waiting, c.Hash, j, currentTurn, c.Status == StatusCompleted, ReasonHash, res)
	}
}

func (p *Pruner) supersedeByFile(calls []ToolCall, currentTurn int, res *Result) {
	waiting := make(map[string][]int)
	for j := range calls {
		c := &calls[j]
		r := p.roles[c.Tool]
		if !r.touchesFile() {
			continue
		}
		if key := p.cfg.Tools.fileKey(r, c.Params); key != "" {
			trigger := r.changesFile() && c.Status == StatusCompleted
			p.supersedeWaiting(calls, waiting, key, j, currentTurn, trigger, ReasonFile, res)
		}
	}
}

func (p *Pruner) supersedeTodos(calls []ToolCall, currentTurn int, res *Result) {
	waiting := make(map[string][]int, 2)
	for j := range calls {
		c := &calls[j]
		var kind string
		switch p.roles[c.Tool] {
		case roleTodoWrite:
			kind = "todowrite"
		case roleTodoRead:
			kind = "todoread"
		default:
			continue
		}
		p.supersedeWaiting(calls, waiting, kind, j, currentTurn, c.Status == StatusCompleted, ReasonTodo, res)
	}
}

// supersedeWaiting is the step all three rules share. waiting holds, per
// key, the calls seen since the key's last trigger. If calls[j] is a
// trigger, it supersedes the prunable ones among them and becomes the only
// call waiting; otherwise it joins them. Each call waits once and is looked
// at once more, so a rule is linear in the number of calls.
func (p *Pruner) supersedeWaiting(calls []ToolCall, waiting map[string][]int, key string, j, currentTurn int, trigger bool, reason Reason, res *Result) {
	if !trigger {
		waiting[key] = append(waiting[key], j)
		return
	}
	logKey := key
	switch reason {
	case ReasonHash:
		logKey = shortHash(key)
	case ReasonTodo:
		logKey = ""
	}
	for _, i := range waiting[key] {
		if p.prunable(&calls[i], currentTurn) {
			p.supersede(&calls[i], &calls[j], reason, logKey, res)
		}
	}
	waiting[key] = append(waiting[key][:0], j)
}
