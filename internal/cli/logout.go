package cli

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/creds"
)

func logoutCommand(*run) *command {
	return &command{
		name: "logout", args: "NAME",
		summary:  "forget the OAuth grants and registered client kept for a server",
		examples: []string{"switchboard logout github"},
		run:      runLogout,
		complete: firstServer,
	}
}

// runLogout forgets the grants kept for a server, and the client its
// logins registered: the next login registers a new one.
func runLogout(r *run) int {
	sc, _, code := r.oauthServer()
	if sc == nil {
		return code
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
