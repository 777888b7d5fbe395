package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// dbLock is a process's hold on a database: an exclusive lock on the file beside it,
// path+".lock", which also names the holder for the message a second process shows. The
// kernel drops the lock when the process ends, even by kill -9; the file is removed when the
// holder lets go, and a stale one is harmless.
type dbLock struct {
	path string
	f    *os.File
	once sync.Once
}

// inUseError says that another process holds the database.
type inUseError struct {
	path string
	// holder is what the holder wrote of itself, "parley serve, pid 1234 on host, since ...".
	holder string
}

func (e *inUseError) Error() string {
	return fmt.Sprintf("database %s is in use by %s: one process per database; stop that one first", e.path, e.who())
}

func (e *inUseError) who() string {
	if e.holder == "" {
		return "another process (it has not said which)"
	}
	return e.holder
}

// lockDatabase takes the database at path for this process, which holder describes, or
// returns an *inUseError naming the process that has it.
func lockDatabase(path, holder string) (*dbLock, error) {
	name := path + ".lock"
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("database %s: lock file: %w", path, err)
		}
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("database %s: lock %s: %w", path, name, err)
		}
		if held {
			b, _ := io.ReadAll(io.LimitReader(f, 512))
			f.Close()
			return nil, &inUseError{path: path, holder: string(b)}
		}
		// The last holder may have removed the file between our open and our lock: then
		// the lock is on a file no one else will find, and the one to take is the new one.
		mine, err1 := f.Stat()
		now, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(mine, now) {
			l := &dbLock{path: name, f: f}
			if err := l.record(holder); err != nil {
				l.release()
				return nil, fmt.Errorf("database %s: lock file: %w", path, err)
			}
			return l, nil
		}
		f.Close()
		if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
			return nil, fmt.Errorf("database %s: lock file: %w", path, err2)
		}
	}
}

// record writes who holds the lock, for the message of a process refused.
func (l *dbLock) record(holder string) error {
	if holder == "" {
		holder = filepath.Base(os.Args[0])
	}
	host, _ := os.Hostname()
	s := fmt.Sprintf("%s, pid %d on %s, since %s", holder, os.Getpid(), host, time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(s), 0)
	return err
}

// release lets the database go: the file goes first, while still locked, so that no one
// takes a lock on a file about to disappear (lockDatabase checks it is on the file's path).
func (l *dbLock) release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		os.Remove(l.path)
		l.f.Close()
	})
}
