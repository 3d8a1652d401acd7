//go:build !unix

package bus

import "errors"

// FreeBytes is not known on this platform; the embedded server runs on
// unix systems only.
func FreeBytes(dir string) (uint64, error) {
	return 0, errors.New("bus: free disk space is only known on unix systems")
}
