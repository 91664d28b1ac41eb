// Package oauthhost is, for tests only, the host half of the login rig: a
// real host whose one server, gh, is an MCP server that needs an OAuth
// login (an oauthtest server's, in the tests), its grants kept in a
// creds.json of the test's.
//
// It lives apart from oauthtest because it imports host, which imports
// the packages whose own tests use oauthtest.
package oauthhost

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// Options shape the host. The zero value is usable.
type Options struct {
	// Creds is where the host keeps its grants; "" means a creds.json in
	// a fresh temporary directory.
	Creds string
	// LoginTimeout is host.OAuthOptions.LoginTimeout; zero is the host's
	// default.
	LoginTimeout time.Duration
	// PerCaller gives gh "oauth": {"perCaller": true}, and the host a
	// SQLite store in a temporary directory and a key that seals each
	// caller's grants (GrantKey).
	PerCaller bool
	// Report makes PerCaller's "perCaller" "report" (report-only).
	Report bool
	// Exchange adds "tokenExchange" with ExchangeClient to gh's "oauth"
	// block, and Issuer; with PerCaller.
	Exchange               bool
	ExchangeClient, Issuer string
	// Store is the store of a PerCaller host (another rig's, as replicas
	// share one, or a PostgreSQL one); nil opens a SQLite one of its own.
	Store Store
	// CallerIdle is host.OAuthOptions.CallerIdle.
	CallerIdle time.Duration
	// NoGrantKey leaves a PerCaller host without GrantKey.
	NoGrantKey bool
	// OnCall is host.Options.OnCall.
	OnCall func(host.CallRecord)
	// Tune, when set, changes the host's options last.
	Tune func(*host.Options)
}

// GrantKey is the key that seals callers' grants in a PerCaller rig.
const GrantKey = "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0zMi1ieXQ="

// Rig is a host whose server gh needs a login.
type Rig struct {
	Host  *host.Host
	Creds string         // the host's creds.json
	Doc   map[string]any // the host's configuration, to write for a CLI
	Store Store          // the host's store, with PerCaller
}

// Store is a state store that keeps callers' grants.
type Store interface {
	store.Store
	store.GrantKeeper
}

// Open opens a host (500ms stop timeout) on one trusted server, gh, at
// the MCP endpoint mcpURL; it closes with the test.
func Open(t testing.TB, mcpURL string, opts *Options) *Rig {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	r := &Rig{Creds: opts.Creds}
	if r.Creds == "" {
		r.Creds = filepath.Join(t.TempDir(), "creds.json")
	}
	gh := map[string]any{"url": mcpURL, "trust": "trusted"}
	r.Doc = map[string]any{"mcpServers": map[string]any{"gh": gh}}
	hopts := &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnCall: opts.OnCall,
		OAuth: &host.OAuthOptions{TokensPath: r.Creds, LoginTimeout: opts.LoginTimeout, CallerIdle: opts.CallerIdle}}
	if opts.PerCaller {
		o := map[string]any{"perCaller": true}
		if opts.Report {
			o["perCaller"] = "report"
		}
		if opts.Exchange {
			o["tokenExchange"], o["clientId"], o["issuer"] = true, opts.ExchangeClient, opts.Issuer
		}
		gh["oauth"] = o
		db := opts.Store
		if db == nil {
			lite, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lite.Close() })
			db = lite
		}
		r.Store = db
		hopts.Ephemeral = false
		hostlink.WithStore(hopts, db)
		if !opts.NoGrantKey {
			hopts.OAuth.GrantKey = GrantKey
		}
	}
	if opts.Tune != nil {
		opts.Tune(hopts)
	}
	data, _ := json.Marshal(r.Doc)
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, hopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	r.Host = h
	return r
}
