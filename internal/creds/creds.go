// Package creds keeps the credentials that servers' configurations
// reference as ${cred:NAME}, apart from the configuration: creds.json in
// Switchboard's home, one JSON object of names to values, mode 0600. A
// file that group or others may read or change, or that another user
// owns, is refused. Writes go through confedit (atomic, with a backup of
// the same mode, under a lock file).
//
// It imports confedit and the standard library. No value it holds is ever
// put in an error.
package creds

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// FileName is the credential store's file in Switchboard's home.
const FileName = "creds.json"

// Path returns the credential store of the home directory home.
func Path(home string) string { return filepath.Join(home, FileName) }

// Load reads the credentials in path: none when the file does not exist.
// A file that group or others may read or change, or that is not the
// user's, is an error that says what to do.
func Load(path string) (map[string]string, error) {
	if err := check(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]string{}, nil
		}
		return nil, err
	}
	data, err := confedit.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decode(path, data)
}

func decode(path string, data []byte) (map[string]string, error) {
	o, err := confedit.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of names to values", path)
	}
	m := make(map[string]string, len(o.Members))
	for _, mem := range o.Members {
		var v string
		if err := json.Unmarshal(mem.Value, &v); err != nil {
			return nil, fmt.Errorf("%s: the value of %q is not a string", path, mem.Key)
		}
		m[mem.Key] = v
	}
	return m, nil
}

// Update changes the credentials in path under its lock: set adds or
// replaces them, and the names in remove are deleted. The file is created
// with mode 0600; an existing one must pass Load's checks.
func Update(path string, set map[string]string, remove []string) error {
	_, err := update(path, set, remove, false)
	return err
}

// Set adds or replaces the credentials in set, as Update does, and
// returns the function that undoes it (when what refers to them could not
// be saved): a name that had a value gets it back, a name that had none
// is deleted.
func Set(path string, set map[string]string) (undo func() error, err error) {
	prev, err := update(path, set, nil, true)
	if err != nil {
		return nil, err
	}
	return func() error {
		restore := map[string]string{}
		var remove []string
		for name := range set {
			if v, ok := prev[name]; ok {
				restore[name] = v
			} else {
				remove = append(remove, name)
			}
		}
		slices.Sort(remove)
		return takeBack(path, restore, remove)
	}, nil
}

// Place adds the credentials in set, each under the name that name
// chooses for it, under the lock of path: name is given the name wanted
// (set's key), the value, and what each name holds (in the file, or
// placed before it in this call), so that a value replaces another one of
// the same name, which someone else may have written meanwhile, only when
// name says so by choosing it. It returns the name each wanted name got,
// and the function that undoes it, as Set does.
func Place(path string, set map[string]string, name func(want, value string, taken func(string) (string, bool)) string) (placed map[string]string, undo func() error, err error) {
	if err := check(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	final := map[string]string{}
	var prev map[string]string // the values this call replaced, for undo
	var added []string         // the names this call wrote anew, for undo
	err = confedit.Edit(path, &confedit.Options{Perm: 0o600, NoBackup: true, Check: func(data []byte) error {
		_, err := decode(path, data)
		return err
	}}, func(o *confedit.Object) error {
		placed, prev, added = map[string]string{}, map[string]string{}, nil
		clear(final)
		stored := func(n string) (string, bool) {
			raw, ok := o.Get(n)
			if !ok {
				return "", false
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return "\x00not a string", true // never equal to a value
			}
			return v, true
		}
		taken := func(n string) (string, bool) {
			if v, ok := final[n]; ok {
				return v, true
			}
			return stored(n)
		}
		for _, want := range sortedKeys(set) {
			n := name(want, set[want], taken)
			placed[want], final[n] = n, set[want]
		}
		for _, n := range sortedKeys(final) {
			v, had := stored(n)
			if had && v == final[n] {
				continue // nothing to write
			}
			if had {
				prev[n] = v
			} else {
				added = append(added, n)
			}
			if err := o.SetValue(n, final[n]); err != nil {
				return err
			}
		}
		return writeJournal(path, added)
	})
	if err != nil {
		return nil, nil, err
	}
	return placed, func() error { return takeBack(path, prev, added) }, nil
}

// takeBack puts back the values in prev and deletes the names in added, then
// forgets the journal of this process.
func takeBack(path string, prev map[string]string, added []string) error {
	if err := Update(path, prev, added); err != nil {
		return err
	}
	Saved(path)
	return nil
}

// The journal: Set and Place, before they add credentials that the
// configuration does not refer to yet, write their names (never their
// values) to path + journalInfix + the process ID. The command removes it
// once the configuration that refers to them is saved (Saved) or the
// credentials are taken back. A journal left by a process that no
// longer runs means a command was killed in between: Sweep deletes its
// credentials that nothing refers to.
const journalInfix = ".pending-"

func journalPath(path string, pid int) string {
	return path + journalInfix + strconv.Itoa(pid)
}

// writeJournal records that this process is adding names to path; no
// names, no journal.
func writeJournal(path string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	data, err := json.Marshal(names)
	if err != nil {
		return err
	}
	return confedit.WriteAtomic(journalPath(path, os.Getpid()), data, 0o600)
}

// Saved says that the configuration referring to the credentials this
// process added to path is saved: their journal is removed.
func Saved(path string) {
	os.Remove(journalPath(path, os.Getpid())) //nolint:errcheck // none when nothing was added
}

// Sweep finishes what killed commands left: for each journal beside path
// whose process no longer runs, it deletes from path the credentials it
// names that used says nothing refers to, then the journal. It returns
// the names deleted.
func Sweep(path string, used func(name string) bool) ([]string, error) {
	journals, err := filepath.Glob(path + journalInfix + "*")
	if err != nil || len(journals) == 0 {
		return nil, err
	}
	var removed []string
	for _, j := range journals {
		pid, err := strconv.Atoi(strings.TrimPrefix(j, path+journalInfix))
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		data, err := os.ReadFile(j)
		if err != nil {
			continue
		}
		var names []string
		if json.Unmarshal(data, &names) != nil {
			names = nil // unreadable: nothing to delete, the journal goes
		}
		var drop []string
		for _, n := range names {
			if !used(n) {
				drop = append(drop, n)
			}
		}
		if len(drop) > 0 {
			if err := Update(path, nil, drop); err != nil {
				return removed, err
			}
			removed = append(removed, drop...)
		}
		os.Remove(j) //nolint:errcheck // another sweep may have been first
	}
	return removed, nil
}

// alive reports whether process pid runs (or cannot be told not to).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// update is Update; it returns the values the names in set had before.
// journal records the names it adds (see writeJournal).
func update(path string, set map[string]string, remove []string, journal bool) (prev map[string]string, err error) {
	if err := check(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	prev = map[string]string{}
	err = confedit.Edit(path, &confedit.Options{Perm: 0o600, NoBackup: true, Check: func(data []byte) error {
		_, err := decode(path, data)
		return err
	}}, func(o *confedit.Object) error {
		for name := range set {
			if raw, ok := o.Get(name); ok {
				var v string
				if err := json.Unmarshal(raw, &v); err != nil {
					return fmt.Errorf("%s: the value of %q is not a string", path, name)
				}
				prev[name] = v
			}
		}
		for _, name := range remove {
			o.Delete(name)
		}
		var added []string
		for _, name := range sortedKeys(set) {
			if _, had := prev[name]; !had {
				added = append(added, name)
			}
			if err := o.SetValue(name, set[name]); err != nil {
				return err
			}
		}
		if journal {
			return writeJournal(path, added)
		}
		return nil
	})
	return prev, err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// check refuses a credential file that group or others may read or
// change, that is not a regular file, or that another user owns.
func check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return confedit.CheckPrivate(path, fi, "credentials")
}
