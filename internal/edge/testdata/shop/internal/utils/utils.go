// Package utils has string helpers nobody uses yet.
package utils

import "strings"

// Shout upper-cases s.
func Shout(s string) string { return strings.ToUpper(s) }
