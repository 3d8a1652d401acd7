package memory

import "time"

// Kind says what a memory records.
type Kind string

// The kinds of memory. KindExperience is a grafted experience (seed 004
// §3); the others come from extraction.
const (
	KindDecision     Kind = "decision"
	KindRationale    Kind = "rationale"
	KindFact         Kind = "fact"
	KindPreference   Kind = "preference"
	KindOpenQuestion Kind = "open_question"
	KindExperience   Kind = "experience"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool {
	switch k {
	case KindDecision, KindRationale, KindFact, KindPreference, KindOpenQuestion, KindExperience:
		return true
	}
	return false
}

// Span is a range of byte offsets [Start, End) in a session's transcript.
type Span struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Memory is one remembered item as stored in the cue_memories bucket. Its
// identity is Hash(Content): every other field may change on update.
type Memory struct {
	Content      string   `json:"content"`
	Kind         Kind     `json:"kind"`
	Rationale    string   `json:"rationale,omitempty"`
	FilesTouched []string `json:"files_touched,omitempty"`
	// Tags are the saver's own labels (save_memory, update_memory), for
	// filtering; they are not part of its identity.
	Tags []string `json:"tags,omitempty"`
	// Confidence is in [0, 1]. Extraction that gets none from its source
	// stores DefaultConfidence.
	Confidence float64 `json:"confidence"`
	Repo       string  `json:"repo"`
	Session    string  `json:"session"`
	// Source is where in the session's transcript the memory came from.
	Source Span `json:"source"`
	// Provider and Model name what extracted the memory last ("rules" for
	// rule-based extraction).
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Hash returns Hash(m.Content): only the content identifies a memory.
func (m Memory) Hash() string { return Hash(m.Content) }
