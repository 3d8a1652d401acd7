package events

import "time"

// Envelope is a decoded event as a worker receives it: the event and where
// it came from. Handlers take an Envelope so they never touch NATS types.
type Envelope struct {
	Subject   string
	MsgID     string
	StreamSeq uint64
	// Delivered counts deliveries of this message, 1 on the first.
	Delivered uint64
	Published time.Time
	Event     Event
}
