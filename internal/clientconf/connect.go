package clientconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// DefaultName is the name the gateway's entry takes in a client's file.
const DefaultName = "switchboard"

// BackupSuffix is appended to a client file's name for the copy Connect
// keeps: the file as it was before the gateway was first written into it
// (empty when there was no file).
const BackupSuffix = ".switchboard-backup"

// Options tune Connect and Disconnect. The zero value is the default.
type Options struct {
	// Name is the gateway entry's name; "" means DefaultName.
	Name string
	// Move also takes the client's other servers out of its file, so that
	// the gateway is its only entry (the caller imports them first: Read),
	// but for those named in Keep, which stay where they are.
	Move bool
	Keep []string
	// Private says that the gateway's entry holds a secret (its token):
	// Connect leaves the file readable and writable by its owner only
	// (mode 0600), whatever its mode was.
	Private bool
	// Force lets Disconnect keep the current version of a server that was
	// moved out and has since been added back with other content, instead
	// of refusing.
	Force bool
}

func (o Options) name() string {
	if o.Name == "" {
		return DefaultName
	}
	return o.Name
}

// Change is what Connect or Disconnect did, or Plan would do.
type Change struct {
	Path     string   // the file changed (symbolic links resolved)
	Backup   string   // the backup's path
	Before   []byte   // the file's content before; nil when it did not exist
	After    []byte   // its content after; nil when it is removed
	Removed  []string // servers taken out (Move)
	Restored []string // servers put back (Disconnect)
	Replaced bool     // Connect replaced an entry of the same name
}

// ErrConflict is returned by Disconnect when putting the backup's servers
// back would overwrite edits made since Connect.
var ErrConflict = errors.New("the file changed since the gateway was connected")

// Plan computes what Connect would write, without writing.
func Plan(c *Client, path string, gw Entry, opts Options) (*Change, error) {
	real, before, err := load(path)
	if err != nil {
		return nil, err
	}
	ch := &Change{Path: real, Backup: real + BackupSuffix, Before: before}
	if err := plan(c, ch, gw, opts); err != nil {
		return nil, err
	}
	return ch, nil
}

// plan fills ch.After, ch.Removed and ch.Replaced from ch.Before.
func plan(c *Client, ch *Change, gw Entry, opts Options) error {
	real, before := ch.Path, ch.Before
	name := opts.name()
	ed, err := newEditor(c, real, before)
	if err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	orig, err := newEditor(c, real, before)
	if err != nil {
		return err
	}
	ch.Replaced = slices.Contains(ed.names(), name)
	if opts.Move {
		for _, n := range ed.names() {
			if n == name || slices.Contains(opts.Keep, n) {
				continue
			}
			if err := ed.remove(n); err != nil {
				return fmt.Errorf("%s: %w", real, err)
			}
			ch.Removed = append(ch.Removed, n)
		}
	}
	gw.Name = name
	if err := ed.set(name, gw); err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	want := map[string]bool{name: true}
	for _, n := range orig.names() {
		if !slices.Contains(ch.Removed, n) {
			want[n] = true
		}
	}
	if err := verify(c, real, orig, ed.bytes(), want, name, before); err != nil {
		return err
	}
	ch.After = ed.bytes()
	return nil
}

// verify parses the edited file again and checks that it holds exactly the
// servers in want, each other than skip as orig has it, and that nothing
// outside the servers changed; a file that was plain JSON must still be.
func verify(c *Client, path string, orig editor, after []byte, want map[string]bool, skip string, before []byte) error {
	fail := func(what string) error {
		return fmt.Errorf("%s: the edit would %s; nothing was written", path, what)
	}
	ed, err := newEditor(c, path, after)
	if err != nil {
		return fail("not parse again (" + err.Error() + ")")
	}
	if je, ok := orig.(*jsonEditor); ok && je.standard && len(bytes.TrimSpace(before)) > 0 {
		if !ed.(*jsonEditor).root.IsStandard() {
			return fail("turn plain JSON into JSON with comments or trailing commas")
		}
	}
	got := ed.names()
	if len(got) != len(want) {
		return fail(fmt.Sprintf("leave %d servers instead of %d", len(got), len(want)))
	}
	for _, n := range got {
		if !want[n] {
			return fail(fmt.Sprintf("leave server %q", n))
		}
		if n == skip {
			continue
		}
		a, _ := orig.value(n)
		b, _ := ed.value(n)
		if !equalJSON(a, b) {
			return fail(fmt.Sprintf("change server %q", n))
		}
	}
	ra, err := orig.rest()
	if err != nil {
		return fail(err.Error())
	}
	rb, err := ed.rest()
	if err != nil {
		return fail(err.Error())
	}
	if !equalJSON(ra, rb) {
		return fail("change settings outside the servers")
	}
	return nil
}

// Connect writes the gateway's entry gw into the client's file at path
// (created if missing), replacing an entry of the same name and, with
// opts.Move, removing the others. Before the first change it copies the
// file to path+BackupSuffix; a later Connect keeps that backup as long as
// the file still holds the gateway's entry, so Disconnect goes back to the
// file as it was before Switchboard.
func Connect(c *Client, path string, gw Entry, opts Options) (*Change, error) {
	ch, err := Plan(c, path, gw, opts)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(ch.Backup)
	keep := statErr == nil && ch.Replaced
	if !keep {
		if err := confedit.WriteAtomic(ch.Backup, ch.Before, modeOf(ch.Path)); err != nil {
			return nil, err
		}
	}
	mode := modeOf(ch.Path)
	if opts.Private {
		mode = 0o600
	}
	if err := replace(ch.Path, ch.Before, ch.After, mode); err != nil {
		return nil, err
	}
	return ch, nil
}

// Disconnect takes the gateway's entry out of the client's file and puts
// back the servers Connect moved out, then removes the backup.
//
// How it decides that nothing is lost: it edits the current file rather
// than copying the backup over it, so changes made since Connect are
// kept. Only when the result means the same as the backup (same servers,
// same settings) is the backup's exact text written back, restoring its
// layout and comments. A moved server that has since been added back with
// other content is a conflict: Disconnect refuses with ErrConflict unless
// opts.Force, which keeps the current version. When the backup is empty
// (there was no file) and nothing but empty objects would be left, the
// file is removed.
func Disconnect(c *Client, path string, opts Options) (*Change, error) {
	real, cur, err := load(path)
	if err != nil {
		return nil, err
	}
	ch := &Change{Path: real, Backup: real + BackupSuffix, Before: cur}
	if cur == nil {
		return nil, fmt.Errorf("%s: %w", real, fs.ErrNotExist)
	}
	bak, err := os.ReadFile(ch.Backup)
	if err != nil {
		return nil, fmt.Errorf("no backup to restore: %w", err)
	}
	if err := undo(c, ch, bak, opts); err != nil {
		return nil, err
	}
	if ch.After == nil {
		if err := os.Remove(real); err != nil {
			return nil, err
		}
	} else if err := replace(real, cur, ch.After, modeOf(real)); err != nil {
		return nil, err
	}
	if err := os.Remove(ch.Backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ch, err
	}
	return ch, nil
}

func quoteList(ns []string) string {
	q := make([]string, len(ns))
	for i, n := range ns {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// sameMeaning reports whether two files hold the same servers with the
// same content and the same other settings.
func sameMeaning(a, b editor) (bool, error) {
	an, bn := a.names(), b.names()
	slices.Sort(an)
	slices.Sort(bn)
	if !slices.Equal(an, bn) {
		return false, nil
	}
	for _, n := range an {
		av, _ := a.value(n)
		bv, _ := b.value(n)
		if !equalJSON(av, bv) {
			return false, nil
		}
	}
	ra, err := a.rest()
	if err != nil {
		return false, err
	}
	rb, err := b.rest()
	if err != nil {
		return false, err
	}
	return equalJSON(ra, rb), nil
}

// onlyEmpty reports whether the file holds no servers and no settings but
// empty objects.
func onlyEmpty(e editor) (bool, error) {
	if len(e.names()) > 0 {
		return false, nil
	}
	r, err := e.rest()
	if err != nil {
		return false, err
	}
	m, ok := r.(map[string]any)
	return ok && len(m) == 0, nil
}

// load resolves symbolic links (a dotfile manager's link stays a link) and
// reads the file; a missing file reads as nil.
func load(path string) (string, []byte, error) {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	data, err := readFile(real)
	if errors.Is(err, fs.ErrNotExist) {
		return real, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return real, data, nil
}

func modeOf(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// replace writes data to path in place of want, with mode mode, refusing
// if the file no longer holds want (the client wrote it meanwhile).
func replace(path string, want, data []byte, mode fs.FileMode) error {
	_, now, err := load(path)
	if err != nil {
		return err
	}
	if (now == nil) != (want == nil) || !bytes.Equal(now, want) {
		return fmt.Errorf("%s changed while it was being edited; nothing was written, try again", path)
	}
	return confedit.WriteAtomic(path, data, mode)
}

// undo fills ch.After (nil: remove the file) and ch.Restored from
// ch.Before, the current file, and bak, the backup.
func undo(c *Client, ch *Change, bak []byte, opts Options) error {
	real, cur := ch.Path, ch.Before
	name := opts.name()
	ed, err := newEditor(c, real, cur)
	if err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	bed, err := newEditor(c, real, bak)
	if err != nil {
		return fmt.Errorf("%s: %w", ch.Backup, err)
	}
	if !slices.Contains(ed.names(), name) {
		return fmt.Errorf("%s holds no %q entry: nothing to disconnect", real, name)
	}
	if err := ed.remove(name); err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	var conflicts []string
	for _, n := range bed.names() {
		bv, _ := bed.value(n)
		if cv, ok := ed.value(n); ok {
			if !equalJSON(bv, cv) {
				conflicts = append(conflicts, n)
			}
			continue
		}
		if err := ed.copyFrom(bed, n); err != nil {
			return err
		}
		ch.Restored = append(ch.Restored, n)
	}
	if len(conflicts) > 0 && !opts.Force {
		return fmt.Errorf("%w: %s now differs from the backup (%s); keep the current version with --force, or edit the file by hand",
			ErrConflict, quoteList(conflicts), ch.Backup)
	}
	ch.After = ed.bytes()
	if same, err := sameMeaning(ed, bed); err == nil && same {
		ch.After = bak
	}
	if len(bytes.TrimSpace(bak)) == 0 {
		if empty, err := onlyEmpty(ed); err == nil && empty {
			ch.After = nil
		}
	}
	return nil
}
