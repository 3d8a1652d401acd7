//go:build !unix

package ingest_test

func mkfifo(string) (bool, error) { return false, nil }
