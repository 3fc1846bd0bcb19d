//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlite

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile takes the lock file name by creating it (O_EXCL): without
// flock(2), a lock file that exists may be a running backup's or a killed
// one's, which cannot be told apart here, so it is busy. Without create
// (removeDeadPartials) nothing is taken: busy.
func lockFile(name string, create bool) (f *os.File, busy bool, err error) {
	if !create {
		return nil, true, nil
	}
	f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, true, nil
	}
	return f, false, err
}

// unlock lets f go, then removes its lock file.
func unlock(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// busyHint adds to the error of a lock that is held: here it may be a
// killed backup's.
func busyHint(name string) string {
	return " If no backup is running (one was killed), remove " + name + "."
}
