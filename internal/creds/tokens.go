package creds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// tokenPrefix starts the name under which an OAuth grant is kept in
// creds.json. The names hold spaces, so no ${cred:NAME} reference can
// name one.
const tokenPrefix = "oauth "

// Token is one OAuth grant, kept in creds.json under its issuer, resource
// and client ID. The client's secret (of a dynamically registered client)
// is kept with it, since refreshing needs it.
type Token struct {
	Issuer       string    `json:"issuer"`
	Resource     string    `json:"resource"`
	ClientID     string    `json:"clientId"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	TokenURL     string    `json:"tokenUrl"`
	AuthStyle    int       `json:"authStyle,omitempty"`
	AccessToken  string    `json:"accessToken"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	// DPoPKey is the key a DPoP-bound grant is bound to (PKCS#8 PEM).
	DPoPKey string `json:"dpopKey,omitempty"`
	// Subject is who the upstream knows the grant's holder as (its
	// subject claim), "" when the tokens do not say; shown, never
	// checked.
	Subject string    `json:"subject,omitempty"`
	Saved   time.Time `json:"saved"`
}

// key is the name t is kept under.
func (t *Token) key() string {
	return tokenPrefix + t.Issuer + " " + t.Resource + " " + t.ClientID
}

// LoadTokens returns the grants in path for resource, the most recently
// saved first. Other credentials are left alone; a grant that does not
// decode is skipped.
func LoadTokens(path, resource string) ([]Token, error) {
	m, err := Load(path)
	if err != nil {
		return nil, err
	}
	var out []Token
	for name, v := range m {
		if !strings.HasPrefix(name, tokenPrefix) {
			continue
		}
		var t Token
		if json.Unmarshal([]byte(v), &t) != nil || t.Resource != resource || t.key() != name {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Token) int { return b.Saved.Compare(a.Saved) })
	return out, nil
}

// SaveToken keeps t in path, replacing the grant of the same issuer,
// resource and client.
func SaveToken(path string, t Token) error {
	if t.Issuer == "" || t.Resource == "" || t.ClientID == "" {
		return fmt.Errorf("a grant needs its issuer, resource and client ID")
	}
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return Update(path, map[string]string{t.key(): string(data)}, nil)
}

// ForgetTokens deletes every grant in path for resource, and the client
// registered for it (see Client), and says how many grants there were.
func ForgetTokens(path, resource string) (int, error) {
	ts, err := LoadTokens(path, resource)
	if err != nil {
		return 0, err
	}
	m, err := Load(path)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(ts), len(ts)+1)
	for i := range ts {
		names[i] = ts[i].key()
	}
	if _, ok := m[clientKey(resource)]; ok {
		names = append(names, clientKey(resource))
	}
	if len(names) == 0 {
		return 0, nil
	}
	return len(ts), Update(path, nil, names)
}

// ReplaceTokens keeps ts, the grants of a new login to resource, in path
// and, in the same update, deletes every other grant for resource.
func ReplaceTokens(path, resource string, ts []Token) error {
	old, err := LoadTokens(path, resource)
	if err != nil {
		return err
	}
	set := map[string]string{}
	for i := range ts {
		t := ts[i]
		if t.Issuer == "" || t.Resource != resource || t.ClientID == "" {
			return fmt.Errorf("a grant needs its issuer, resource and client ID")
		}
		data, err := json.Marshal(t)
		if err != nil {
			return err
		}
		set[t.key()] = string(data)
	}
	var remove []string
	for i := range old {
		if _, ok := set[old[i].key()]; !ok {
			remove = append(remove, old[i].key())
		}
	}
	return Update(path, set, remove)
}
