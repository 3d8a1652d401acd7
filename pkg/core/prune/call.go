package prune

// Status is where a tool call stands. Only completed calls supersede or are
// superseded.
type Status string

// The statuses a tool call goes through.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
	StatusError      Status = "error"
)

// Reason says which rule superseded a call; it is also the key of its tally
// in Stats.
type Reason string

// The three auto-supersede rules, in the order they run.
const (
	ReasonHash Reason = "hash"
	ReasonFile Reason = "file"
	ReasonTodo Reason = "todo"
)

// ToolCall is one tool call of a conversation, as the extractor reads it from
// a transcript. Supersede fills in Hash and, when it prunes the call,
// Superseded, SupersededBy and Reason.
type ToolCall struct {
	ID     string
	Tool   string
	Params map[string]any
	// Turn is the conversation turn the call was made in.
	Turn   int
	Status Status

	// Output is the call's result as the model saw it. OutputTokens, when
	// positive, is its token count; otherwise the count is taken from
	// Output, only for calls that are superseded.
	Output       string
	OutputTokens int

	// Hash is the hex SHA-256 of the tool name and the canonical JSON of
	// Params; logs show its first six characters.
	Hash string

	Superseded   bool
	SupersededBy string // the id of the call that made this one stale
	Reason       Reason
}

// Supersession records one call pruned by Supersede.
type Supersession struct {
	ID     string // the superseded call
	Tool   string
	By     string // the call that superseded it
	ByTool string
	Reason Reason
	// Key is the short hash for ReasonHash and the file key for ReasonFile;
	// empty for ReasonTodo.
	Key    string
	Tokens int // the superseded call's output tokens, now saved
}
