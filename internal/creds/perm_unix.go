//go:build unix

package creds

import (
	"fmt"
	"os"
	"syscall"
)

// check refuses a credential file that group or others may read or
// change, that is not a regular file, or that another user owns.
func check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s holds credentials, but group or others may read or change it (mode %04o); run 'chmod 600 %s'", path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s holds credentials, but it belongs to user %d, not to you (%d); run 'chown %d %s'", path, st.Uid, os.Getuid(), os.Getuid(), path)
	}
	return nil
}
