//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// lockFile takes the lock file name (flock(2), exclusive, without
// waiting), creating it when create is set. A process that dies releases
// its locks, so a lock no one holds is a dead backup's. busy reports that
// another holds it; a missing name without create is fs.ErrNotExist.
func lockFile(name string, create bool) (f *os.File, busy bool, err error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	for {
		f, err := os.OpenFile(name, flags, 0o600)
		if err != nil {
			return nil, false, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EINTR) {
			f.Close()
			continue
		}
		if err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, true, nil
			}
			return nil, false, err
		}
		// The holder before us removes the file as it lets go (unlock):
		// a lock of a file that is no longer at name locks nothing.
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, false, err
		}
		now, err := os.Stat(name)
		if err == nil && os.SameFile(held, now) {
			return f, false, nil
		}
		f.Close()
		if err != nil && (!errors.Is(err, fs.ErrNotExist) || !create) {
			return nil, false, err
		}
	}
}

// unlock removes the lock file of f, then lets it go.
func unlock(f *os.File) {
	os.Remove(f.Name())
	f.Close()
}

// busyHint adds to the error of a lock that is held: nothing, as only a
// running process holds one.
func busyHint(string) string { return "" }
