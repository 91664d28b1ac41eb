// Package confedit edits a JSON configuration file in place, safely: the
// document is read as ordered members, and the edit is written into the
// file's own layout (Layout: every byte the edit does not change stays as
// written, indentation, blank lines and key order included; what it adds
// follows its siblings' indentation), the result is checked by the
// caller before it is written, and writes are atomic (a temporary file in
// the same directory, fsynced, renamed over the file, the directory
// fsynced) with the previous content kept as FILE.bak, under an exclusive
// lock file FILE.lock so that two writers never lose each other's edit.
// It is the one place files are written atomically (WriteAtomic, WriteNew)
// and the one check that a file holding secrets is private (CheckPrivate).
//
// The CLI's editing commands, the credential store, clients' files
// (clientconf), the gateway's token and config's trust file use it.
package confedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// MaxFileSize caps a file read for editing.
const MaxFileSize = 4 << 20

// Member is one member of a JSON object, its value as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object as ordered members. Its zero value is the empty
// object.
type Object struct {
	Members []Member
}

// ParseObject reads data, which must be one JSON object, keeping the
// order of its members. Empty or blank data is the empty object. It reads
// through jsonscan.Parse: a key repeated in any object of data is an
// error naming its path and line.
func ParseObject(data []byte) (*Object, error) {
	o := &Object{}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	t, err := jsonscan.Parse(data)
	if err != nil {
		return nil, err
	}
	if t.Kind != jsonscan.KindObject {
		return nil, errors.New("not a JSON object")
	}
	for _, f := range t.Fields {
		o.Members = append(o.Members, Member{f.Key, bytes.Clone(data[f.Value.Offset:f.Value.End])})
	}
	return o, nil
}

// Get returns the value of key, and whether it is there.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	for _, m := range o.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key where it is, or appends the member.
func (o *Object) Set(key string, v json.RawMessage) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{key, v})
}

// SetValue sets key to v marshalled as JSON.
func (o *Object) SetValue(key string, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	o.Set(key, b)
	return nil
}

// Delete removes key, and reports whether it was there.
func (o *Object) Delete(key string) bool {
	i := slices.IndexFunc(o.Members, func(m Member) bool { return m.Key == key })
	if i < 0 {
		return false
	}
	o.Members = slices.Delete(o.Members, i, i+1)
	return true
}

// Object returns the value of key as an Object: the empty object when key
// is absent or null, an error when it is not an object.
func (o *Object) Object(key string) (*Object, error) {
	v, ok := o.Get(key)
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return &Object{}, nil
	}
	sub, err := ParseObject(v)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", key, err)
	}
	return sub, nil
}

// MarshalJSON writes the members in order, indented by two spaces.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so that "<" and "&" in a
// command line stay readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ReadFile reads path for editing: its content, or nil when it does not
// exist.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := bytesize.ReadAll(f, MaxFileSize)
	if errors.Is(err, bytesize.ErrTooLarge) {
		return nil, fmt.Errorf("%s is %w", path, err)
	}
	return data, err
}

// Options says how Edit writes.
type Options struct {
	// Perm is the new file's mode; an existing file keeps its own.
	// Zero means 0600.
	Perm fs.FileMode
	// Check, when set, is given the new content before it is written; an
	// error leaves the file as it was and is returned.
	Check func(data []byte) error
	// LockWait bounds the wait for another writer's lock. Zero means 10 s.
	LockWait time.Duration
	// NoBackup keeps no copy of the old content, and removes one an
	// earlier write left: for a file of secrets, where a backup would
	// keep a secret after it was rotated or removed.
	NoBackup bool
}

// Edit changes the JSON object in path under its lock: it reads the file
// (a missing file is the empty object), lets edit change the object, checks
// the result (Options.Check) and writes it atomically, keeping the old
// content as path.bak (unless NoBackup). An edit or check that fails
// writes nothing. The directory is created (0700) when missing. Temporary
// files that an earlier writer of path left when it was killed mid-write
// are removed first: under the lock, none is in use.
func Edit(path string, opts *Options, edit func(*Object) error) error {
	if opts == nil {
		opts = &Options{}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	unlock, err := Lock(path, opts.LockWait)
	if err != nil {
		return err
	}
	defer unlock()
	sweepTemps(path)
	old, err := ReadFile(path)
	if err != nil {
		return err
	}
	obj, err := ParseObject(old)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := edit(obj); err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	data = keepLayout(old, append(data, '\n'))
	if opts.Check != nil {
		if err := opts.Check(data); err != nil {
			return err
		}
	}
	if opts.NoBackup {
		if err := os.Remove(path + BackupSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if bytes.Equal(data, old) {
		return nil
	}
	if opts.NoBackup {
		perm := opts.Perm
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		} else if perm == 0 {
			perm = 0o600
		}
		return WriteAtomic(path, data, perm)
	}
	return WriteFile(path, data, opts.Perm)
}
