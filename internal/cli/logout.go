package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

type logoutFlags struct {
	caller string
}

func logoutCommand(*run) *command {
	f := &logoutFlags{}
	return &command{
		name: "logout", args: "NAME [--caller ID]",
		summary:  "forget the OAuth grants and registered client kept for a server, or one gateway caller's own grants",
		examples: []string{"switchboard logout github", "switchboard logout github --caller sub:ann@example.com"},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.caller, "caller", "", `forget this gateway caller's own grants (a named client, or "sub:<subject>") for a server with "oauth.perCaller", in the state store; others keep theirs`)
		},
		run:      f.run,
		complete: firstServer,
	}
}

// run forgets the grants kept for a server, and the client its logins
// registered: the next login registers a new one. With --caller it
// forgets that caller's own grants in the store instead; a gateway
// sharing the store stops using them within 30 s.
func (f *logoutFlags) run(r *run) int {
	sc, _, code := r.oauthServer()
	if sc == nil {
		return code
	}
	if f.caller != "" {
		return r.withStore(func(st store.Store) int {
			k, ok := st.(store.GrantKeeper)
			if !ok {
				return r.usagef("this state store keeps no caller's grants")
			}
			n, err := k.DeleteGrants(r.ctx, f.caller, sc.URL)
			if err != nil {
				return r.configError(err)
			}
			if n == 0 {
				return r.done(fmt.Sprintf("no login of %q kept for %q", f.caller, sc.Name), sc.Name, "", nil)
			}
			return r.done(fmt.Sprintf("logged %q out of %q: %d grant(s) forgotten", f.caller, sc.Name, n), sc.Name, "", nil)
		})
	}
	path, err := r.credsPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	n, err := creds.ForgetTokens(path, sc.URL)
	if err != nil {
		return r.configError(err)
	}
	if n == 0 {
		return r.done(fmt.Sprintf("no login kept for %q", sc.Name), sc.Name, path, nil)
	}
	return r.done(fmt.Sprintf("logged out of %q: %d grant(s) forgotten", sc.Name, n), sc.Name, path, nil)
}
