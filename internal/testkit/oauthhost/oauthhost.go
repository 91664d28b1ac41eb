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
)

// Options shape the host. The zero value is usable.
type Options struct {
	// Creds is where the host keeps its grants; "" means a creds.json in
	// a fresh temporary directory.
	Creds string
	// LoginTimeout is host.OAuthOptions.LoginTimeout; zero is the host's
	// default.
	LoginTimeout time.Duration
}

// Rig is a host whose server gh needs a login.
type Rig struct {
	Host  *host.Host
	Creds string         // the host's creds.json
	Doc   map[string]any // the host's configuration, to write for a CLI
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
	r.Doc = map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": mcpURL, "trust": "trusted"}}}
	data, _ := json.Marshal(r.Doc)
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond,
		OAuth: &host.OAuthOptions{TokensPath: r.Creds, LoginTimeout: opts.LoginTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	r.Host = h
	return r
}
