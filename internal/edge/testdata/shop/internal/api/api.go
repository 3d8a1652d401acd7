// Package api is the shop's HTTP API.
package api

import (
	"net/http"

	"example.com/shop/internal/auth"
	"example.com/shop/internal/types"
)

// Placer places orders.
type Placer interface {
	Place(o types.Order) error
}

// Handler serves the API.
type Handler struct{ orders Placer }

// New returns a Handler placing orders with p.
func New(p Placer) *Handler { return &Handler{orders: p} }

// Addr is where the API listens.
func (h *Handler) Addr() string { return ":8080" }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !auth.Allowed(r.Header.Get("Authorization")) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if err := h.orders.Place(types.Order{ID: r.URL.Path}); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}
