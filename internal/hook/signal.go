package hook

import (
	"encoding/json"
	"syscall"
)

// Send delivers sig to the daemon's socket at path as one datagram and
// returns at once: a non-blocking send that never waits for the daemon.
// An error means the daemon did not get it (no daemon listens, or its
// queue is full); hooks treat that as "daemon down" only on SessionStart.
//
// It uses the syscall package rather than net: the net package's
// initialisation and resolver cost the hook binary startup time.
func Send(path string, sig Signal) error {
	b, err := json.Marshal(sig)
	if err != nil {
		return err
	}
	return sendDatagram(path, b)
}

func sendDatagram(path string, b []byte) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	return syscall.Sendto(fd, b, 0, &syscall.SockaddrUnix{Name: path})
}
