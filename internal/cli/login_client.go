package cli

import (
	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// keptClientAside copies the OAuth client an earlier login registered
// for resource (creds.Client) from path into aside, the creds.json a login
// keeps its grant in until it succeeds, so that the login reuses it
// instead of registering another. The function it returns, called once
// the login has ended, gives path what the login did with the client: the
// client the login used or registered when its grant was kept (saved);
// else, what a failed login forgot or marked of the kept client.
func keptClientAside(path, aside, resource string) (settle func(saved bool) error, err error) {
	kept, err := creds.LoadClient(path, resource)
	if err != nil {
		return nil, err
	}
	if kept != nil {
		if err := creds.SaveClient(aside, *kept); err != nil {
			return nil, err
		}
	}
	return func(saved bool) error {
		if saved {
			return creds.CopyClient(aside, path, resource)
		}
		if kept == nil {
			return nil
		}
		c, err := creds.LoadClient(aside, resource)
		switch {
		case err != nil:
			return err
		case c == nil:
			return creds.ForgetClient(path, resource, kept.ClientID)
		case c.ClientID == kept.ClientID && *c != *kept:
			return creds.SaveClient(path, *c)
		}
		return nil
	}, nil
}
