package prune

// ReminderKind names the reminders that may sit in an agent's context. At
// most one of each kind is there at any time.
type ReminderKind uint8

// The reminder kinds. NotReminder is every other message.
const (
	NotReminder ReminderKind = iota
	KindTodoReminder
	KindAutomataReflection
)

// Reminder is a message injected into the context at Turn.
type Reminder struct {
	Kind ReminderKind
	Turn int
	Text string
}

// Inject removes every message of m's kind from context and appends m, so
// a context never holds two todo reminders or two automata reflections:
// a stale reminder is removed before the fresh one goes in. kindOf tells
// the kind of a message (NotReminder for ordinary ones). The result reuses
// context's backing array.
func Inject[M any](context []M, kindOf func(M) ReminderKind, m M) []M {
	kind := kindOf(m)
	kept := context[:0]
	for _, c := range context {
		if kind == NotReminder || kindOf(c) != kind {
			kept = append(kept, c)
		}
	}
	clear(context[len(kept):])
	return append(kept, m)
}
