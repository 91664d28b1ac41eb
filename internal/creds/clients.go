package creds

import (
	"encoding/json"
	"fmt"
	"time"
)

// clientPrefix starts the name under which a registered OAuth client is
// kept in creds.json. Like a grant's, the name holds a space, so no
// ${cred:NAME} reference can name it; it does not start with tokenPrefix,
// so no grant is read from it.
const clientPrefix = "oauth-client "

// Client is an OAuth client that Switchboard registered itself at an
// authorization server by dynamic client registration (RFC 7591), kept
// apart from the grants so that the next login to the resource reuses it
// instead of registering another: one per resource, the last registered.
// Only a client whose registration response Switchboard read is kept; a
// configured client or a client ID metadata document never is.
type Client struct {
	Issuer       string `json:"issuer"`
	Resource     string `json:"resource"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// RedirectURI is the loopback redirect URI the client was registered
	// with.
	RedirectURI string    `json:"redirectUri,omitempty"`
	Registered  time.Time `json:"registered"`
	// NoReuse is set once a login that reused a client kept for the
	// resource was refused at the token endpoint after the browser leg
	// (the authorization server may take a registered client only in the
	// way it registered): the client is kept, as a mark, but not offered,
	// and every login to the resource registers, as before any was kept.
	NoReuse bool `json:"noReuse,omitempty"`
}

func clientKey(resource string) string { return clientPrefix + resource }

// LoadClient returns the client kept for resource in path, nil when there
// is none (or what is kept does not decode).
func LoadClient(path, resource string) (*Client, error) {
	m, err := Load(path)
	if err != nil {
		return nil, err
	}
	v, ok := m[clientKey(resource)]
	if !ok {
		return nil, nil
	}
	var c Client
	if json.Unmarshal([]byte(v), &c) != nil || c.Resource != resource || c.Issuer == "" || c.ClientID == "" {
		return nil, nil
	}
	return &c, nil
}

// SaveClient keeps c in path, replacing the client kept for its resource.
func SaveClient(path string, c Client) error {
	if c.Issuer == "" || c.Resource == "" || c.ClientID == "" {
		return fmt.Errorf("a registered client needs its issuer, resource and client ID")
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return Update(path, map[string]string{clientKey(c.Resource): string(data)}, nil)
}

// ForgetClient deletes the client kept for resource in path when it is
// clientID (another login may have kept a newer one since).
func ForgetClient(path, resource, clientID string) error {
	c, err := LoadClient(path, resource)
	if err != nil || c == nil || c.ClientID != clientID {
		return err
	}
	return Update(path, nil, []string{clientKey(resource)})
}

// CopyClient makes the client kept for resource in to the one kept in
// from: copied when from keeps one, deleted when it keeps none. A login
// made aside (in its own creds.json until it succeeds) takes the kept
// client in, and gives back the one it used or registered.
func CopyClient(from, to, resource string) error {
	c, err := LoadClient(from, resource)
	if err != nil {
		return err
	}
	if c == nil {
		m, err := Load(to)
		if err != nil {
			return err
		}
		if _, ok := m[clientKey(resource)]; !ok {
			return nil
		}
		return Update(to, nil, []string{clientKey(resource)})
	}
	return SaveClient(to, *c)
}
