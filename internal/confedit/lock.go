package confedit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// LockSuffix names the lock file beside the file it guards.
const LockSuffix = ".lock"

// Lock takes the exclusive lock of path: an advisory lock (flock) on
// path.lock, which holds the holder's process ID for the message of a
// writer that waits too long. It waits at most wait (zero means 10 s) and
// then fails naming the holder. The lock is released by the returned
// function, or when the process ends. The lock file stays.
func Lock(path string, wait time.Duration) (unlock func(), err error) {
	if wait <= 0 {
		wait = 10 * time.Second
	}
	name := path + LockSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(delay*2, 50*time.Millisecond) {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			holder := "another process"
			if b, err := os.ReadFile(name); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					holder = fmt.Sprintf("process %d", pid)
				}
			}
			f.Close()
			return nil, fmt.Errorf("%s is being changed by %s (lock %s held for over %s); try again when it is done", path, holder, name, wait)
		}
		time.Sleep(delay)
	}
	// The file's content is for people: the PID of the holder.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) //nolint:errcheck // informative only
	}
	return func() {
		f.Truncate(0) //nolint:errcheck // informative only
		unlockFile(f) //nolint:errcheck // closing releases it anyway
		f.Close()
	}, nil
}
