//go:build unix

package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Runtimes are the keys a [Spec.Runtime] requirement may name, each with
// the program that is asked for its version and what to tell a person who
// lacks it.
var runtimes = map[string]struct {
	program string // looked up on the child's PATH
	human   string // the name people know it by
	get     string // where to get it
}{
	"node":   {"node", "Node.js", "from https://nodejs.org or your package manager"},
	"python": {"python3", "Python", "from https://www.python.org/downloads/ or your package manager"},
	"uv":     {"uv", "uv", "see https://docs.astral.sh/uv/getting-started/installation/"},
	"bun":    {"bun", "Bun", "see https://bun.sh"},
	"deno":   {"deno", "Deno", "see https://deno.com"},
	"docker": {"docker", "Docker", "see https://docs.docker.com/get-docker/, and start the daemon"},
}

// RuntimeNames lists the keys a [Spec.Runtime] requirement may name,
// sorted.
func RuntimeNames() []string {
	names := make([]string, 0, len(runtimes))
	for k := range runtimes {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// commandRuntime maps a command's base name to the runtime it needs: a
// server started with npx needs node on the PATH as much as npx itself.
var commandRuntime = map[string]string{
	"npx": "node", "node": "node",
	"python3": "python", "python": "python",
	"uvx": "uv", "uv": "uv",
	"bun": "bun", "bunx": "bun",
	"deno":   "deno",
	"docker": "docker",
}

// VersionTimeout bounds one `<runtime> --version`.
const VersionTimeout = 3 * time.Second

// ErrRuntimeMissing means a runtime the server needs (node for npx, uv for
// uvx, ...) is not installed: it is not on the child's PATH. It wraps
// [ErrProgramNotFound]. The error is a *RuntimeError inside the
// *StartError.
var ErrRuntimeMissing = fmt.Errorf("runtime missing: %w", ErrProgramNotFound)

// ErrRuntimeTooOld means a runtime does not meet the server's requirement
// ([Spec.Runtime]), or its version could not be read. The error is a
// *RuntimeError inside the *StartError.
var ErrRuntimeTooOld = errors.New("runtime too old")

// A RuntimeError says which runtime a server lacks and how to get it.
type RuntimeError struct {
	Server  string // Spec.Server
	Runtime string // a key of Spec.Runtime: "node", "python", ...
	Program string // the program looked for: "node", "python3", ...
	Path    string // where it was found; "" when missing
	PATH    string // the search path, when it was looked up there
	Want    string // the requirement (">=20"); "" when none
	Got     string // the version found; "" when missing or unreadable
	Cause   error  // why the version could not be read, if it could not
	Err     error  // ErrRuntimeMissing or ErrRuntimeTooOld
}

func (e *RuntimeError) Error() string {
	rt, ok := runtimes[e.Runtime]
	if !ok {
		return fmt.Sprintf("server %q: %v", e.Server, e.Cause)
	}
	how := fmt.Sprintf("install %s", rt.human)
	if e.Want != "" {
		how += fmt.Sprintf(" (%s %s)", e.Runtime, e.Want)
	}
	how += " " + rt.get
	switch {
	case errors.Is(e.Err, ErrRuntimeMissing):
		where := "in PATH (" + e.PATH + ")"
		if strings.Contains(e.Program, "/") {
			where = "at " + e.Program
		}
		return fmt.Sprintf("server %q: %s is not installed: %q not found %s: %s", e.Server, rt.human, e.Program, where, how)
	case e.Got == "":
		return fmt.Sprintf("server %q: needs %s %s, but the version of %s could not be read (%v): %s", e.Server, e.Runtime, e.Want, e.Path, e.Cause, how)
	}
	return fmt.Sprintf("server %q: needs %s %s, found %s (%s): %s", e.Server, e.Runtime, e.Want, e.Got, e.Path, how)
}

func (e *RuntimeError) Unwrap() error { return e.Err }

// checkRuntimes checks the runtimes spec needs before it is started: the
// one its command implies (npx needs node) must exist, and each runtime
// in spec.Runtime must exist and meet its requirement. command is the
// resolved command; env and searchPath are the child's. It returns nil or
// a *RuntimeError.
func checkRuntimes(spec Spec, command string, env []string, searchPath string) error {
	needs := map[string]string{} // runtime -> requirement ("" for existence only)
	if rt, ok := commandRuntime[filepath.Base(spec.Command)]; ok {
		needs[rt] = ""
	}
	for rt, want := range spec.Runtime {
		needs[rt] = want
	}
	for _, rt := range slices.Sorted(maps.Keys(needs)) {
		if err := checkRuntime(spec, rt, needs[rt], command, env, searchPath); err != nil {
			return err
		}
	}
	return nil
}

func checkRuntime(spec Spec, rt, want, command string, env []string, searchPath string) error {
	info, ok := runtimes[rt]
	if !ok {
		return &RuntimeError{Server: spec.Server, Runtime: rt, Program: rt, Want: want, Err: ErrRuntimeTooOld,
			Cause: fmt.Errorf("unknown runtime %q: want one of %s", rt, strings.Join(RuntimeNames(), ", "))}
	}
	e := &RuntimeError{Server: spec.Server, Runtime: rt, Program: info.program, Want: want}
	// The command is its own runtime when it is one (node, a full path
	// to python3, or uvx for uv): ask it, not whatever else the PATH
	// holds. npx is not node: it needs node on the PATH.
	path := ""
	switch base := filepath.Base(spec.Command); {
	case base == info.program, rt == "python" && base == "python":
		path = command
	case commandRuntime[base] == rt && rt != "node":
		// uvx, bunx: the command is the runtime's own launcher; ask
		// the runtime proper if it is there, else the launcher.
		if p, err := lookPath(info.program, searchPath, spec.Dir); err == nil {
			path = p
		} else {
			path = command
		}
	}
	if path == "" {
		p, err := lookPath(info.program, searchPath, spec.Dir)
		if err != nil {
			e.PATH, e.Err = searchPath, ErrRuntimeMissing
			return e
		}
		path = p
	}
	e.Path = path
	if want == "" {
		return nil
	}
	c, err := semver.NewConstraint(want)
	if err != nil {
		e.Err, e.Cause = ErrRuntimeTooOld, fmt.Errorf("invalid requirement %q: %v", want, err)
		return e
	}
	got, err := runtimeVersion(path, env, spec.Dir)
	if err != nil {
		e.Err, e.Cause = ErrRuntimeTooOld, err
		return e
	}
	if !c.Check(got) {
		e.Err, e.Got = ErrRuntimeTooOld, got.Original()
		return e
	}
	return nil
}

// versionCache remembers the version of each runtime binary, keyed by its
// path, size and modification time, for the life of the process: an
// upgrade in place changes the key.
var versionCache struct {
	mu sync.Mutex // guards m
	m  map[versionKey]*semver.Version
}

type versionKey struct {
	path  string
	size  int64
	mtime time.Time
}

// versionPattern finds the version in `--version` output: "v20.11.1",
// "Python 3.12.1", "Docker version 27.3.1, build ce12230", "uv 0.5.1".
var versionPattern = regexp.MustCompile(`\d+(\.\d+){0,2}`)

// runtimeVersion runs `path --version` (bounded by VersionTimeout) with the
// child's environment and returns the first version in its output.
func runtimeVersion(path string, env []string, dir string) (*semver.Version, error) {
	abs := path
	if !filepath.IsAbs(abs) && dir != "" {
		abs = filepath.Join(dir, abs)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	key := versionKey{path: abs, size: fi.Size(), mtime: fi.ModTime()}
	versionCache.mu.Lock()
	v, ok := versionCache.m[key]
	versionCache.mu.Unlock()
	if ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env, cmd.Dir = env, dir
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second // a grandchild holding the pipe open
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s --version did not answer within %s", path, VersionTimeout)
		}
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	m := versionPattern.Find(out.b.Bytes())
	if m == nil {
		return nil, fmt.Errorf("%s --version printed no version", path)
	}
	v, err = semver.NewVersion(string(m))
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", path, err)
	}
	versionCache.mu.Lock()
	if versionCache.m == nil {
		versionCache.m = map[versionKey]*semver.Version{}
	}
	versionCache.m[key] = v
	versionCache.mu.Unlock()
	return v, nil
}

// limitedBuffer keeps the first 4 KiB written to it and discards the rest.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4<<10 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// CheckRequirement reports what is wrong with a runtime requirement as
// the "runtime" field of a server holds it ("node": ">=20"; "" asks only
// that the runtime exist), or "".
func CheckRequirement(rt, want string) string {
	if _, ok := runtimes[rt]; !ok {
		return fmt.Sprintf("unknown runtime %q: want one of %s", rt, strings.Join(RuntimeNames(), ", "))
	}
	if want == "" {
		return ""
	}
	if _, err := semver.NewConstraint(want); err != nil {
		return fmt.Sprintf("invalid version requirement %q: %v (want e.g. \">=20\" or \"^3.11\")", want, err)
	}
	return ""
}
