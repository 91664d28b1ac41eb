package confedit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// BackupSuffix names the copy of a file's previous content that
// WriteFile keeps.
const BackupSuffix = ".bak"

// WriteFile replaces path with data atomically (WriteAtomic), keeping the
// old content, if any, as path.bak (with the old file's mode). A new file
// gets perm (zero means 0600); an existing one keeps its mode. The caller
// holds path's Lock.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o600
	}
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := WriteAtomic(path+BackupSuffix, old, perm); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return WriteAtomic(path, data, perm)
}

// WriteAtomic replaces path with data, mode perm: a reader sees the old
// content or the new, never a part. The data goes to a temporary file in
// the same directory (created 0700 when missing), is fsynced, and is
// renamed over path; then the directory is fsynced.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op once renamed
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// WriteNew writes data to path, mode perm, as WriteAtomic does, but only
// when there is no file there: the file appears complete or not at all,
// and one already there (written by another process meanwhile) is left as
// it is, the error then being fs.ErrExist.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: not exclusive, still atomic.
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes data to a new temporary file, mode perm, beside path,
// fsynced, and returns its name.
func writeTemp(path string, data []byte, perm fs.FileMode) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// sweepTemps removes the temporary files that writeTemp made for path or
// for its backup and that were never renamed (their writer was killed):
// ".NAME-<digits>" and ".NAME.bak-<digits>" beside path. The caller holds
// path's Lock. Errors are ignored: a file left is tried again next time.
func sweepTemps(path string) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		for _, prefix := range []string{"." + base + "-", "." + base + BackupSuffix + "-"} {
			rest, ok := strings.CutPrefix(name, prefix)
			if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}
