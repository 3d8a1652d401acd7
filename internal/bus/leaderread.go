package bus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LastFromLeader is the last message stream holds on subject as the
// stream's leader has it (jetstream.ErrMsgNotFound when it holds none).
// A stream that allows direct gets, as every key-value bucket does,
// answers Get from whichever replica the request reaches first — the one
// on the client's own server when there is one — and a replica still
// catching up answers with what it has; a compare-and-set written
// against that answer fails for as long as the replica lags. The
// message-get API is answered by the leader, which decides the write.
func (c *Conn) LastFromLeader(ctx context.Context, stream, subject string) (*jetstream.RawStreamMsg, error) {
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return nil, err
	}
	reply, err := c.NC.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, fmt.Errorf("bus: last message of %s on %s: %w", stream, subject, err)
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Header  []byte `json:"hdrs"`
			Data    []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("bus: last message of %s on %s: the answer does not decode: %w", stream, subject, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, fmt.Errorf("bus: last message of %s on %s: %w", stream, subject, resp.Error)
	case resp.Message == nil:
		return nil, fmt.Errorf("bus: last message of %s on %s: an answer with no message and no error", stream, subject)
	}
	msg := &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Seq, Data: resp.Message.Data}
	if len(resp.Message.Header) > 0 {
		if msg.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return nil, fmt.Errorf("bus: last message of %s on %s: its headers do not decode: %w", stream, subject, err)
		}
	}
	return msg, nil
}
