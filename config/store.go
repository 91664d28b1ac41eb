package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
)

// Store says where Switchboard keeps its state: approvals, held drifts,
// saved catalogues, the audit log, trust scores and quota counts (the
// top-level "store" object). The zero Store is the default: SQLite, in
// state.db in Switchboard's home, for this process alone.
type Store struct {
	// Postgres is the URL of a PostgreSQL database (postgres://... or
	// postgresql://...) with ${VAR} references expanded ("postgres", e.g.
	// "${DATABASE_URL}"): every Switchboard that names it shares its state,
	// as replicas of one gateway do. "" means SQLite.
	//
	// It may hold a password. String, GoString, LogValue and MarshalJSON
	// (of Store and of Config) never show it; Redacted is the URL fit to
	// print.
	Postgres string
}

// storeFields are the JSON keys of "store".
var storeFields = []string{"postgres"}

// Redacted returns the Postgres URL with its password, if any, replaced by
// "xxxxx" (in the user information and in a password= parameter); "" when
// Postgres is "".
func (s Store) Redacted() string { return RedactURL(s.Postgres) }

// String names the store: "sqlite", or "postgres " and the redacted URL.
func (s Store) String() string {
	if s.Postgres == "" {
		return "sqlite"
	}
	return "postgres " + s.Redacted()
}

// GoString is like String, so that %#v cannot print a password either.
func (s Store) GoString() string { return fmt.Sprintf("config.Store{Postgres: %q}", s.Redacted()) }

// LogValue logs the redacted URL.
func (s Store) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON writes {"postgres": URL} with the URL redacted, or {}.
func (s Store) MarshalJSON() ([]byte, error) {
	if s.Postgres == "" {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]string{"postgres": s.Redacted()})
}

// RedactURL returns a connection URL fit to print: its password, in the
// user information or in a password= parameter, replaced by "xxxxx". A
// string that is not a URL is replaced whole, since where its password is
// cannot be known.
func RedactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "[redacted: not a URL]"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// checkPostgresURL returns what is wrong with a PostgreSQL URL, or "". It
// never quotes the URL, which may hold a password.
func checkPostgresURL(s string) string {
	if s == "" {
		return "must not be empty (omit \"store\" to keep state in SQLite)"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "must be a PostgreSQL URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE"
	}
	return ""
}

// expandedURL decodes a URL string whose ${VAR}s are expanded, then
// checked by check (a message, or "" when it is fine); errors are
// recorded at fp, and ok is false after one.
func (d *decoder) expandedURL(n *node, fp *jsonPath, check func(string) string) (string, bool) {
	tmpl, ok := d.str(n, fp, "")
	if !ok {
		return "", false
	}
	v, _, errs := expand(tmpl, d.lookup)
	for _, e := range errs {
		d.add(fp, "", e.msg, nil)
	}
	if errs != nil {
		return "", false
	}
	if msg := check(v); msg != "" {
		if v != tmpl {
			msg = "after expansion, " + msg
		}
		d.add(fp, "", msg, nil)
		return "", false
	}
	return v, true
}

// decodeStore decodes the top-level "store" object.
func (d *decoder) decodeStore(n *node, p *jsonPath) Store {
	var s Store
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return s
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "postgres":
			if v, ok := d.expandedURL(m.val, fp, checkPostgresURL); ok {
				s.Postgres = v
			}
		default:
			d.unknown(fp, m.key, storeFields, nil, "")
		}
	}
	return s
}

// validateStore checks a hand-built Config's store.
func (c *Config) validateStore(add func(p *jsonPath, msg string)) {
	if c.Store.Postgres == "" {
		return
	}
	if msg := checkPostgresURL(c.Store.Postgres); msg != "" {
		add((*jsonPath)(nil).k("store").k("postgres"), msg)
	}
}
