//go:build unix

package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// inherited are the only host variables a child ever sees. Anything else in
// the host environment (API keys, tokens, cloud credentials) stays with us:
// a server gets a secret only when its config names it in "env".
var inherited = []string{"HOME", "PATH", "TMPDIR", "LANG"}

// ChildEnv builds a child's environment: HOME, PATH, TMPDIR and LANG from the
// host when set there, then every entry of extra, which wins over the host
// value. No other host variable is included. The result is "KEY=value"
// entries sorted by key, so the same inputs always give the same slice.
// hostLookup nil means os.LookupEnv. ChildEnv does not validate extra; Start
// does.
func ChildEnv(hostLookup func(string) (string, bool), extra map[string]string) []string {
	if hostLookup == nil {
		hostLookup = os.LookupEnv
	}
	vars := make(map[string]string, len(inherited)+len(extra))
	for _, k := range inherited {
		if v, ok := hostLookup(k); ok {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	// Keys cannot contain '=' (validateEnv), so sorting the entries sorts by key.
	slices.Sort(env)
	return env
}

// validateEnv rejects entries that execve would reject or misread.
func validateEnv(env map[string]string) error {
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("invalid environment variable name %q", k)
		}
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("environment variable %s: value contains a NUL byte", k)
		}
	}
	return nil
}

// envValue returns the value of key in a "KEY=value" list.
func envValue(env []string, key string) (string, bool) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v, true
		}
	}
	return "", false
}

// lookPath resolves prog the way execvp would for the child, but against the
// child's PATH (exec.LookPath only knows ours). A name with a slash is not
// looked up; a relative one is checked relative to dir, where the child will
// run. Relative PATH entries (including the empty entry, meaning ".") are
// skipped, as exec.LookPath refuses them since Go 1.19: a server must not be
// picked up from whatever directory it happens to be started in.
func lookPath(prog, path, dir string) (string, error) {
	if strings.Contains(prog, "/") {
		p := prog
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := checkExecutable(p); err != nil {
			return "", err
		}
		return prog, nil // exec resolves a relative Path against Cmd.Dir itself
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, prog)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", ErrProgramNotFound
}

// checkExecutable reports ErrProgramNotFound for a missing file and an error
// for a directory or a file without any execute bit.
func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrProgramNotFound
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", p)
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
