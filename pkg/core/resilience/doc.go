// Package resilience keeps CueDeck's calls to slow or metered services
// within bounds (seed 003 §2–4, §6; seed 002 §6).
package resilience
