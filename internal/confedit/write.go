package confedit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupSuffix names the copy of a file's previous content that
// WriteFile keeps.
const BackupSuffix = ".bak"

// WriteFile replaces path with data atomically: a reader sees the old
// content or the new, never a part. The data goes to a temporary file in
// the same directory, is fsynced, and is renamed over path; then the
// directory is fsynced. The old content, if any, is kept as path.bak
// (with the old file's mode). A new file gets perm (zero means 0600); an
// existing one keeps its mode. The caller holds path's Lock.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o600
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
		if err := backup(path, perm); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
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
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// backup copies path to path.bak atomically, with mode perm.
func backup(path string, perm fs.FileMode) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	bak := path + BackupSuffix
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(bak)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(old)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, bak)
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
