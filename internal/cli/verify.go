package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/lockfile"
)

// ExitDiffers is verify's exit code when what runs differs from the
// lockfile.
const ExitDiffers = 1

// verifyFlags are the flags of `switchboard verify`.
type verifyFlags struct {
	lock, pub string
	refresh   bool
}

func verifyCommand(*run) *command {
	f := &verifyFlags{}
	return &command{
		name: "verify", args: "--lock FILE --pub KEY",
		summary: "check a lockfile's signature, then compare what runs with it: exit 1 naming each difference, 0 when equal",
		examples: []string{
			"switchboard verify --lock switchboard.lock --pub team.key.pub",
			"switchboard verify --lock switchboard.lock --pub team.key.pub --json",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.lock, "lock", "", "the lockfile `file` (written by 'switchboard lock')")
			fs.StringVar(&f.pub, "pub", "", "the public key `file` that verifies its signature")
			fs.BoolVar(&f.refresh, "refresh", false, refreshUsage)
		},
		check: func(r *run) error {
			if f.lock == "" {
				return errors.New("verify: --lock names the lockfile")
			}
			return nil
		},
		run: f.run,
	}
}

func (f *verifyFlags) run(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	want, err := readLock(f.lock, f.pub)
	if err != nil {
		code := "invalid_lockfile"
		if errors.Is(err, lockfile.ErrSignature) {
			code = "bad_signature"
		}
		return r.failf(ExitUsage, code, "verify: %v", err)
	}
	if code := r.openForLock(f.refresh); code != ExitOK {
		return code
	}
	defer r.host.Close()
	got := &lockfile.Lock{Servers: map[string]lockfile.Server{}}
	for _, p := range hostlink.Of(r.host).ServerPins() {
		if !p.Known {
			r.host.Ready(r.ctx, p.Server) //nolint:errcheck // a server whose lists stay unknown differs in them
		}
	}
	for _, p := range hostlink.Of(r.host).ServerPins() {
		got.Servers[p.Server] = toLockServer(p)
	}
	diffs := lockfile.Compare(want, got)
	if r.json {
		if diffs == nil {
			diffs = []lockfile.Difference{}
		}
		r.printJSON(map[string]any{"equal": len(diffs) == 0, "differences": diffs})
	} else {
		for _, d := range diffs {
			fmt.Fprintln(r.env.Stdout, launcher.Escape(d.String()))
		}
		if len(diffs) == 0 {
			fmt.Fprintf(r.env.Stdout, "what runs matches %s (%d servers)\n", launcher.Escape(f.lock), len(want.Servers))
		}
	}
	if len(diffs) > 0 {
		return ExitDiffers
	}
	return ExitOK
}
