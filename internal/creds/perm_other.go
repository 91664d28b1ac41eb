//go:build !unix

package creds

import (
	"fmt"
	"os"
)

// check refuses a credential file that is not a regular file. Such
// platforms have no mode bits to check: the file is as private as the
// home.
func check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}
