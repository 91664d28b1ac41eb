//go:build !unix

package confedit

import (
	"fmt"
	"io/fs"
)

// CheckPrivate refuses a file that holds secrets unless it is a regular
// file. Such platforms have no mode bits to check: the file is as private
// as the directory it is in.
func CheckPrivate(path string, fi fs.FileInfo, holds string) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}
