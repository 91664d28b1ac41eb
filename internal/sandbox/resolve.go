package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Launch is what [Resolve] knows of one server's start.
type Launch struct {
	Server string
	// Program is the server's program as found on its PATH (absolute).
	Program string
	// PATH is the server's search path: its directories are executable,
	// so that what the server runs by name runs.
	PATH string
	Args []string
	// Dir is the working directory ("" means ours).
	Dir string
	// Env is the server's configured environment (scanned in report mode
	// for paths outside the grants).
	Env map[string]string
	// Home is the user's home; "" means none is known.
	Home string
	// SwitchboardHome is Switchboard's own home: never granted.
	SwitchboardHome string
	// PrivateDir is the server's own directory for its package caches,
	// kept from one start to the next (under $XDG_CACHE_HOME, never in
	// Switchboard's home). "" means none: caches stay where they are.
	PrivateDir string
	// TempDir is the server's private temporary directory, made for this
	// start.
	TempDir string
}

// A Resolved policy and what the launcher must do for it.
type Resolved struct {
	Policy Policy
	// Env is added to the server's environment: TMPDIR, and the package
	// managers' caches moved into the private directory.
	Env map[string]string
	// Preset names the runtime preset that applied ("node", "python",
	// "" for none).
	Preset string
	// Dirs must exist before the server starts (its caches).
	Dirs []string
	// Notes say what a default could not grant and why.
	Notes []string
}

// systemRead are read by every server: the system's libraries, programs
// and configuration, the kernel's views of the server itself, and the
// names the resolver needs.
var (
	systemExec  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt", "/etc/alternatives"}
	systemRead  = []string{"/etc", "/proc", "/sys", "/dev/urandom", "/dev/random", "/run/systemd/resolve", "/run/resolvconf"}
	systemWrite = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
)

// ownHomeDirs are the directories under the user's home that well-known
// servers keep their own settings and state in, by package: granted to
// that server alone, read and write.
var ownHomeDirs = map[string][]string{
	"@wonderwhy-er/desktop-commander": {".claude-server-commander"},
}

// Network-free packages: servers that need no network once installed.
var offline = []string{
	"@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-memory",
	"@modelcontextprotocol/server-sequential-thinking", "mcp-server-git", "mcp-server-time",
	"@modelcontextprotocol/server-everything",
}

// Resolve turns a server's settings into the policy its shim applies: the
// defaults (the system, the program's runtime and package, the working
// directory, read-only; the private temporary directory and the granted
// paths writable; the user's home closed), a preset for the program's
// runtime, and the settings' own grants. It refuses a grant that would
// open Switchboard's home, which Landlock cannot deny once a parent is
// granted.
func Resolve(s Settings, l Launch) (Resolved, error) {
	r := Resolved{Env: map[string]string{}}
	p := &r.Policy
	p.Mode = s.Mode
	if p.Mode == "" {
		p.Mode = ModeOn
	}
	p.Exec = slices.Clone(systemExec)
	p.Read = slices.Clone(systemRead)
	p.Write = slices.Clone(systemWrite)
	mb := s.MemoryMB
	if mb == 0 {
		mb = DefaultMemoryMB
	}
	p.MemoryBytes = int64(mb) << 20
	p.Processes = s.Processes
	if p.Processes == 0 {
		p.Processes = DefaultProcesses
	}
	p.CPU = s.CPU
	if p.CPU == 0 {
		p.CPU = DefaultCPU
	}

	// grant adds a default grant, unless it would open the user's home
	// as a whole or Switchboard's home.
	grant := func(list *[]string, path, what string) {
		if path == "" {
			return
		}
		path = filepath.Clean(path)
		if bad := l.closed(path); bad != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %s not granted: %s", what, path, bad))
			return
		}
		if !slices.Contains(*list, path) {
			*list = append(*list, path)
		}
	}

	if l.TempDir != "" {
		grant(&p.Write, l.TempDir, "temporary directory")
		r.Env["TMPDIR"] = l.TempDir
	}
	// The runtime: the program's directory, and its install prefix when
	// it lives in a bin directory (node under ~/.nvm/versions/node/vX).
	real := l.Program
	if rp, err := filepath.EvalSymlinks(l.Program); err == nil {
		real = rp
	}
	for _, prog := range []string{l.Program, real} {
		grant(&p.Exec, prog, "program")
		grant(&p.Exec, installRoot(filepath.Dir(prog)), "runtime")
	}
	// A script installed by npm (node_modules/.bin/x, a link into its
	// package): the project that holds its node_modules.
	if strings.Contains(real, "/node_modules/") {
		grant(&p.Exec, packageRoot(real), "package")
	}
	for _, d := range filepath.SplitList(l.PATH) {
		if filepath.IsAbs(d) {
			grant(&p.Exec, d, "PATH directory")
		}
	}
	// The working directory, read-only.
	dir := l.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	} else if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	grant(&p.Read, dir, "working directory")

	// The package: the project of the first argument that names an
	// existing file (the script a runtime runs); and every file an
	// argument names, read-only (sh -c SCRIPT PROGRAM runs PROGRAM).
	// Directories an argument names are not granted (report mode lists
	// them), but for the filesystem server's below.
	base := filepath.Base(l.Program)
	first := true
	for _, a := range l.Args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		path := a
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			if first {
				grant(&p.Exec, packageRoot(path), "package")
				first = false
			}
			grant(&p.Exec, filepath.Clean(path), "file argument")
		}
	}

	// Presets.
	network := Network{}
	joined := real + " " + strings.Join(l.Args, " ")
	switch {
	case base == "node" || base == "npx" || base == "npm" || strings.HasPrefix(base, "node") || strings.Contains(real, "/node_modules/"):
		r.Preset = "node"
		if l.Home != "" {
			grant(&p.Exec, filepath.Join(l.Home, ".nvm"), "node versions")
			grant(&p.Read, filepath.Join(l.Home, ".npmrc"), "npm settings")
		}
		if l.PrivateDir != "" {
			cache := filepath.Join(l.PrivateDir, "npm")
			r.Dirs = append(r.Dirs, cache)
			r.Env["npm_config_cache"] = cache
			r.Env["npm_config_update_notifier"] = "false"
			grant(&p.Write, cache, "npm cache")
		}
	case base == "uvx" || base == "uv" || strings.HasPrefix(base, "python") || base == "pipx":
		r.Preset = "python"
		if l.Home != "" {
			grant(&p.Exec, filepath.Join(l.Home, ".local", "share", "uv", "python"), "uv's Pythons")
		}
		if l.PrivateDir != "" {
			cache := filepath.Join(l.PrivateDir, "uv")
			r.Dirs = append(r.Dirs, cache)
			r.Env["UV_CACHE_DIR"] = cache
			r.Env["PIPX_HOME"] = filepath.Join(l.PrivateDir, "pipx")
			r.Dirs = append(r.Dirs, r.Env["PIPX_HOME"])
			grant(&p.Write, cache, "uv cache")
			grant(&p.Write, r.Env["PIPX_HOME"], "pipx home")
		}
	}
	for pkg, dirs := range ownHomeDirs {
		if strings.Contains(joined, pkg) && l.Home != "" {
			for _, d := range dirs {
				own := filepath.Join(l.Home, d)
				r.Dirs = append(r.Dirs, own) // made before it starts: Landlock grants what exists
				grant(&p.Write, own, "the server's own settings")
			}
		}
	}
	if (base == "git" || strings.Contains(joined, "mcp-server-git")) && l.Home != "" {
		grant(&p.Read, filepath.Join(l.Home, ".gitconfig"), "git settings")
	}
	if pkg := offlinePackage(joined); pkg != "" && l.installed(pkg, base) {
		network = Network{Off: true}
	}
	// The filesystem server's allowed directories are its arguments.
	if strings.Contains(joined, "server-filesystem") {
		after := strings.Contains(real, "server-filesystem") // the program is the server
		for _, a := range l.Args {
			if strings.Contains(a, "server-filesystem") {
				after = true
				continue
			}
			if after && !strings.HasPrefix(a, "-") {
				if err := l.checkGrant(a); err != nil {
					return Resolved{}, fmt.Errorf("server %q: the filesystem server's directory %s: %w", l.Server, a, err)
				}
				grant(&p.Write, l.expand(a, dir), "allowed directory")
			}
		}
	}

	// The settings' own grants.
	for i, g := range s.Read {
		if err := l.checkGrant(g); err != nil {
			return Resolved{}, fmt.Errorf("server %q: sandbox read[%d] %s: %w", l.Server, i, g, err)
		}
		p.Exec = appendNew(p.Exec, l.expand(g, dir))
	}
	for i, g := range s.Write {
		if err := l.checkGrant(g); err != nil {
			return Resolved{}, fmt.Errorf("server %q: sandbox write[%d] %s: %w", l.Server, i, g, err)
		}
		p.Write = appendNew(p.Write, l.expand(g, dir))
	}
	if s.Network != nil {
		network = *s.Network
	}
	p.Network = network
	return r, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// expand makes a grant absolute: "~" is the user's home, a relative path
// is relative to dir.
func (l Launch) expand(path, dir string) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		path = filepath.Join(l.Home, path[1:])
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(path)
}

// ErrSwitchboardHome means a grant would open Switchboard's home.
var ErrSwitchboardHome = errors.New("it would open Switchboard's home, which holds every server's credentials; grant a directory that does not contain it")

// checkGrant refuses a grant that would open Switchboard's home.
func (l Launch) checkGrant(g string) error {
	path := l.expand(g, "/")
	if l.SwitchboardHome != "" && within(l.SwitchboardHome, path) || within(path, l.SwitchboardHome) && l.SwitchboardHome != "" {
		return ErrSwitchboardHome
	}
	return nil
}

// closed says why a default grant of path is not made ("" when it is).
func (l Launch) closed(path string) string {
	switch {
	case path == "/":
		return "it is the root directory"
	case l.Home != "" && path == filepath.Clean(l.Home):
		return "it is the user's home; grant it in \"sandbox\" to open it"
	case l.SwitchboardHome != "" && (within(l.SwitchboardHome, path) || within(path, l.SwitchboardHome)):
		return "it would open Switchboard's home"
	}
	return ""
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	if dir == "" || path == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// installRoot is dir's install prefix when dir is a bin directory (so
// that a runtime finds its libraries: node's lib/node_modules), else dir.
func installRoot(dir string) string {
	if filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return dir
}

// packageRoot is the project a script belongs to: the directory that
// holds the outermost node_modules on its path (its dependencies are
// there too), else the nearest directory with a package.json or a
// pyproject.toml, else the script's own directory.
func packageRoot(script string) string {
	if i := strings.Index(script, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
		return script[:i]
	}
	for dir := filepath.Dir(script); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		for _, marker := range []string{"package.json", "pyproject.toml"} {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir
			}
		}
	}
	return filepath.Dir(script)
}

// offlinePackage names the network-free package the command line runs,
// or "".
func offlinePackage(cmdline string) string {
	for _, pkg := range offline {
		if strings.Contains(cmdline, pkg) {
			return pkg
		}
	}
	return ""
}

// installed reports whether pkg is on disk already: run by a runtime from
// a path (node /x/node_modules/pkg/dist/index.js), or found in the
// server's private npm or uv cache (npx -y and uvx fetch at first launch
// and need the network then).
func (l Launch) installed(pkg, base string) bool {
	if base != "npx" && base != "uvx" && base != "pipx" {
		return true
	}
	if l.PrivateDir == "" {
		return false
	}
	name := pkg
	if i := strings.Index(name, "@"); i > 0 {
		name = name[:i] // a version: pkg@1.2.3
	}
	for _, pattern := range []string{
		filepath.Join(l.PrivateDir, "npm", "_npx", "*", "node_modules", name, "package.json"),
		filepath.Join(l.PrivateDir, "uv", "archive-v0", "*", "lib", "python*", "site-packages", strings.ReplaceAll(name, "-", "_")),
	} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return true
		}
	}
	return false
}
