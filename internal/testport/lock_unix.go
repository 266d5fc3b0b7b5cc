//go:build unix

package testport

import (
	"errors"
	"os"
	"syscall"
)

// held are the files of the ports this process holds, kept open (and
// reachable: a collected file closes, and its lock goes with it).
var held []*os.File

// reserve locks the file at path for the rest of the process's life, or
// returns errTaken if somebody holds it. The lock belongs to the open file,
// which is never closed: a second open in this process gets a lock of its
// own and is refused like another process's.
func reserve(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return errTaken
		}
		return err
	}
	held = append(held, f)
	return nil
}
