// Package billing charges placed orders.
package billing

import (
	"example.com/shop/internal/api"
	"example.com/shop/internal/auth"
	"example.com/shop/internal/types"
)

// Charge bills o through h when token is allowed.
func Charge(h *api.Handler, token string, o types.Order) bool {
	return h != nil && auth.Allowed(token) && o.ID != ""
}
