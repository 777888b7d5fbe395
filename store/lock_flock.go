//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting; held reports that another open
// file has it. The lock is the open file's: it goes when f is closed or the process ends.
func tryLock(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// writable is nil when this process may write path (it says why not otherwise: permission
// denied, read-only file system).
func writable(path string) error {
	const wOK = 2 // W_OK of access(2)
	return syscall.Access(path, wOK)
}
