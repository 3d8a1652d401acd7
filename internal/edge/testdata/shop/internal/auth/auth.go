// Package auth checks the shop's tokens.
package auth

import (
	"errors"

	"example.com/shop/internal/types"
)

// ErrNoToken is returned for a request without a token.
var ErrNoToken = errors.New("auth: no token")

// Allowed reports whether token may call the API.
func Allowed(token string) bool { return token != "" && token != types.Anonymous }
