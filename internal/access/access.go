// Package access decides who may call the tools and how often: bearer
// tokens that name the repos they may read, the identity a call carries in
// its context from the transport that received it (MCP over HTTP or stdio,
// NATS request/reply) to the edge that answers it, and the per-tool,
// per-client rate limits of seed 002 §6 as a tools.Caller middleware.
//
// The edge enforces the repos of an identity itself, so that results from
// other repos never appear, whatever tool returns them; this package only
// carries and checks identities.
package access

import (
	"context"
	"slices"
)

// Identity is who makes a tool call.
type Identity struct {
	// Client is what rate limits count against: the token's name, an MCP
	// session, or a local process.
	Client string
	// Token names the token the caller authenticated with; empty when the
	// transport needs none (stdio, loopback HTTP without tokens).
	Token string
	// Repos the caller may read; nil means every repo.
	Repos []string
	// Session is the MCP session the call came in, "" without one (stdio,
	// stateless HTTP); it scopes what a session was already sent.
	Session string
}

// MayRead reports whether the identity may read repo.
func (id Identity) MayRead(repo string) bool {
	return id.Repos == nil || slices.Contains(id.Repos, repo)
}

// Restricted reports whether some repos are out of the identity's reach.
func (id Identity) Restricted() bool { return id.Repos != nil }

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity ctx carries. A call without one comes
// from inside the process (a test, the daemon's own scene rendering): it
// may read every repo and is limited as client "local".
func FromContext(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok {
		return id
	}
	return Identity{Client: LocalClient}
}

// LocalClient is the client name of calls that carry no identity.
const LocalClient = "local"
