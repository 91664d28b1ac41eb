package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/lockfile"
)

// lockFlags are the flags of `switchboard lock`.
type lockFlags struct {
	out    string // --out FILE; "" or "-" writes to stdout
	key    string // --key FILE: the private key that signs
	newKey string // --new-key FILE: make a key pair (FILE and FILE.pub) and stop
}

func lockCommand(*run) *command {
	f := &lockFlags{}
	return &command{
		name: "lock", args: "--key KEY [--out FILE] | --new-key FILE",
		summary: "write a signed lockfile of what runs: each server's launch and package version, the hash of each tool, prompt and template (see docs/PINS.md)",
		examples: []string{
			"switchboard lock --new-key team.key       # team.key (private, 0600) and team.key.pub",
			"switchboard lock --key team.key --out switchboard.lock",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.out, "out", "", "write the lockfile to `file` (default: standard output)")
			fs.StringVar(&f.key, "key", "", "sign with the private key in `file` (made by --new-key)")
			fs.StringVar(&f.newKey, "new-key", "", "make an Ed25519 key pair: the private key in `file` (0600), the public key in file.pub; nothing else")
		},
		check: func(r *run) error {
			switch {
			case f.newKey != "" && (f.key != "" || f.out != ""):
				return errors.New("lock: --new-key makes a key pair and nothing else")
			case f.newKey == "" && f.key == "":
				return errors.New("lock: --key names the private key that signs (make one with --new-key)")
			}
			return nil
		},
		run: f.run,
	}
}

func (f *lockFlags) run(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	if f.newKey != "" {
		return f.makeKey(r)
	}
	priv, err := os.ReadFile(f.key)
	if err != nil {
		return r.usagef("lock: %v", err)
	}
	if code := r.openForLock(false); code != ExitOK {
		return code
	}
	defer r.host.Close()
	lock := &lockfile.Lock{Servers: map[string]lockfile.Server{}}
	for _, p := range hostlink.Of(r.host).ServerPins() {
		if p.Held {
			return r.failf(ExitUpstream, "held", "server %q is held (its launch is not approved): approve it ('switchboard approve %s') before locking", p.Server, launcher.Escape(p.Server))
		}
		if !p.Known {
			if err := r.host.Ready(r.ctx, p.Server); err != nil {
				return r.failf(ExitUpstream, "unavailable", "server %q: its lists are not known: %v", p.Server, err)
			}
		}
	}
	for _, p := range hostlink.Of(r.host).ServerPins() {
		lock.Servers[p.Server] = toLockServer(p)
	}
	data, err := lockfile.Sign(lock, priv)
	if err != nil {
		return r.usagef("lock: %v", err)
	}
	if f.out == "" || f.out == "-" {
		r.env.Stdout.Write(data)
		return ExitOK
	}
	if err := os.WriteFile(f.out, data, 0o644); err != nil {
		return r.fail(err)
	}
	fmt.Fprintf(r.env.Stderr, "locked %d servers in %s\n", len(lock.Servers), launcher.Escape(f.out))
	return ExitOK
}

// makeKey writes a new key pair.
func (f *lockFlags) makeKey(r *run) int {
	priv, pub, err := lockfile.NewKey()
	if err != nil {
		return r.fail(err)
	}
	for _, w := range []struct {
		path string
		data []byte
		perm os.FileMode
	}{{f.newKey, priv, 0o600}, {f.newKey + ".pub", pub, 0o644}} {
		if err := confedit.WriteNew(w.path, w.data, w.perm); errors.Is(err, os.ErrExist) {
			return r.usagef("lock: %s exists: a key is not overwritten", w.path)
		} else if err != nil {
			return r.fail(err)
		}
	}
	fmt.Fprintf(r.env.Stdout, "private key: %s (keep it secret)\npublic key:  %s.pub\n", launcher.Escape(f.newKey), launcher.Escape(f.newKey))
	return ExitOK
}

// openForLock opens a host as the commands that call tools do, so that
// every enabled server's lists are known (started, or read from its saved
// catalogue; with refresh, every server discovered again).
func (r *run) openForLock(refresh bool) int {
	r.cmd.host = &hostUse{listing: true, refresh: func() bool { return refresh }}
	return r.open()
}

// toLockServer is what a lockfile pins of a server.
func toLockServer(p hostlink.ServerPins) lockfile.Server {
	s := lockfile.Server{Launch: p.Launch, Instructions: p.Instructions, Tools: nonEmpty(p.Tools), Prompts: nonEmpty(p.Prompts), Templates: nonEmpty(p.Templates)}
	if p.Package != nil {
		s.Package = &lockfile.Package{Registry: p.Package.Registry, Name: p.Package.Name, Version: p.Package.Version, Integrity: p.Package.Integrity}
	}
	return s
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// hostLock is what `serve --lock` holds the host to.
func hostLock(l *lockfile.Lock) map[string]hostlink.ServerPins {
	out := map[string]hostlink.ServerPins{}
	for name, s := range l.Servers {
		p := hostlink.ServerPins{Server: name, Launch: s.Launch, Instructions: s.Instructions, Tools: s.Tools, Prompts: s.Prompts, Templates: s.Templates}
		if s.Package != nil {
			p.Package = &config.LaunchPackage{Registry: s.Package.Registry, Name: s.Package.Name, Version: s.Package.Version, Integrity: s.Package.Integrity}
		}
		out[name] = p
	}
	return out
}

// readLock reads and verifies a lockfile with a public key.
func readLock(lockPath, pubPath string) (*lockfile.Lock, error) {
	if pubPath == "" {
		return nil, errors.New("--lock needs --pub, the public key that verifies it")
	}
	data, err := os.ReadFile(lockPath)
	if err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(pubPath)
	if err != nil {
		return nil, err
	}
	l, err := lockfile.Read(data, pub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lockPath, err)
	}
	return l, nil
}
