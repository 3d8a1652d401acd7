//go:build !unix

package ingest

const openNonBlock = 0
