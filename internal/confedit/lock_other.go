//go:build !unix

package confedit

import "os"

// tryLock has no advisory lock to take on this platform: writers are not
// serialised against each other there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }
