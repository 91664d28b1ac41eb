//go:build unix

package confedit

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// CheckPrivate refuses a file that holds secrets (holds says what, for
// the message) unless it is a regular file that only its owner may read
// or change and that owner is the user; fi is path's. The error says what
// to do.
func CheckPrivate(path string, fi fs.FileInfo, holds string) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		writable := ""
		if perm&0o022 != 0 {
			writable = ", writable by others"
		}
		return fmt.Errorf("%s holds %s, but group or others may read or change it (mode %04o%s); run 'chmod 600 %s'", path, holds, perm, writable, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s holds %s, but it belongs to user %d, not to you (%d); run 'chown %d %s'", path, holds, st.Uid, os.Getuid(), os.Getuid(), path)
	}
	return nil
}
