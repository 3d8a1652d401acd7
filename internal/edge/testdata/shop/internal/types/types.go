// Package types holds the shop's shared types.
package types

import "time"

// Anonymous is the token of a caller who did not log in.
const Anonymous = "anonymous"

// Order is one order.
type Order struct {
	ID     string
	Placed time.Time
}
