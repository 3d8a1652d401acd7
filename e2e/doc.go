// Package e2e runs CueDeck's real images in containers (testcontainers-go,
// reaper disabled) and checks what crosses process and network boundaries.
// `make e2e` builds the images first.
package e2e
