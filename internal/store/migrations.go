package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
)

// ErrSchemaTooNew is wrapped by an implementation's Open error when the
// database records a migration this binary does not have: a newer
// Switchboard wrote it, and this one would misread it.
var ErrSchemaTooNew = errors.New("database schema is newer than this Switchboard")

// A Migration is one step of an implementation's schema history: the
// file NNNN_name.sql, applied in order. A migration, once released, is
// never edited: a change is a new file with the next number.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

// LoadMigrations returns the migrations in fsys's directory dir in order,
// checking that they are numbered 1, 2, 3... with no gap or duplicate, so
// that "applied up to N" means exactly the first N files.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries { // ReadDir sorts by name, so by number
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s: want version %d", e.Name(), len(ms)+1)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	return ms, nil
}
