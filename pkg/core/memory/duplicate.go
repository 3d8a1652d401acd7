package memory

import "time"

// Action is what to do with an extracted memory.
type Action string

// The actions of seed 003 §9's duplicate decision.
const (
	ActionInsert Action = "insert"
	ActionUpdate Action = "update"
	ActionSkip   Action = "skip"
)

// Reason says why an Action was chosen.
type Reason string

// The reasons of seed 003 §9.
const (
	ReasonUniqueHash         Reason = "unique_hash"
	ReasonConfidenceImproved Reason = "confidence_improved"
	ReasonEqualConfidence    Reason = "equal_confidence"
	ReasonLowerConfidence    Reason = "lower_confidence"
)

// Decision is the outcome of DecideDuplicate.
type Decision struct {
	Action Action `json:"action"`
	Reason Reason `json:"reason"`
	// Hash is the candidate's content hash, the key to write under.
	Hash string `json:"hash"`
	// Match is the index in existing of the duplicate, or -1 on insert.
	Match int `json:"match"`
	// ExistingConfidence and NewConfidence are the two confidences
	// compared; for an update ExistingConfidence is also the expected
	// value of the conditional write (the seed's updateCriteria).
	ExistingConfidence float64 `json:"existing_confidence"`
	NewConfidence      float64 `json:"new_confidence"`
	// Confidence is what to store on update:
	// MergeConfidence(ExistingConfidence, NewConfidence).
	Confidence float64 `json:"confidence"`
}

// DecideDuplicate is seed 003 §9's processDuplicateDecision. existing holds
// the stored memories that may share the candidate's hash; the first whose
// content hashes the same is the duplicate. With none, the candidate is
// inserted (unique_hash). With one, the candidate updates it only if its
// confidence is strictly greater (confidence_improved); otherwise it is
// skipped (equal_confidence or lower_confidence; a NaN confidence is never
// greater nor equal, so it counts as lower).
//
// The stored confidence after an update is the harmonic mean of the two,
// as the seed specifies, so it lies between them: an update can leave the
// memory less confident than the candidate that triggered it (0.6 then 0.9
// stores 0.72).
func DecideDuplicate(candidate Memory, existing []Memory) Decision {
	h := candidate.Hash()
	match := -1
	for i := range existing {
		if existing[i].Hash() == h {
			match = i
			break
		}
	}
	if match < 0 {
		return Decision{Action: ActionInsert, Reason: ReasonUniqueHash, Hash: h, Match: -1}
	}
	d := Decision{
		Hash:               h,
		Match:              match,
		ExistingConfidence: existing[match].Confidence,
		NewConfidence:      candidate.Confidence,
	}
	switch {
	case d.NewConfidence > d.ExistingConfidence:
		d.Action, d.Reason = ActionUpdate, ReasonConfidenceImproved
		d.Confidence = MergeConfidence(d.ExistingConfidence, d.NewConfidence)
	case d.NewConfidence == d.ExistingConfidence:
		d.Action, d.Reason = ActionSkip, ReasonEqualConfidence
	default:
		d.Action, d.Reason = ActionSkip, ReasonLowerConfidence
	}
	return d
}

// Updated returns the record an update decision writes: existing with the
// seed's updateFields taken from candidate. The content, kind, repo,
// session, source and creation time stay (the same hash means the same
// content, first seen there); the confidence becomes d.Confidence; the
// rationale and files touched, like the seed's emotional context, come from
// the candidate when it has them; the provider and model name the latest
// extraction (the seed's lastProvider, lastModel); UpdatedAt becomes now.
func (d Decision) Updated(existing, candidate Memory, now time.Time) Memory {
	m := existing
	m.Confidence = d.Confidence
	if candidate.Rationale != "" {
		m.Rationale = candidate.Rationale
	}
	if len(candidate.FilesTouched) > 0 {
		m.FilesTouched = append([]string(nil), candidate.FilesTouched...)
	}
	m.Provider, m.Model = candidate.Provider, candidate.Model
	m.UpdatedAt = now
	return m
}
