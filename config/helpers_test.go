package config

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testFile is the source name used in tests; errors start with it.
const testFile = "/home/u/.switchboard/config.json"

// fakeEnv is a process environment for tests: they never touch the real one.
type fakeEnv map[string]string

func (e fakeEnv) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

func (e fakeEnv) opts() *LoadOptions { return &LoadOptions{LookupEnv: e.lookup} }

// mustParse parses src as testFile and fails the test on error.
func mustParse(t *testing.T, src string, env fakeEnv) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src), testFile, env.opts())
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return cfg
}

// parseErr parses src as testFile and returns the error text ("" if none).
func parseErr(t *testing.T, src string, env fakeEnv) string {
	t.Helper()
	_, err := Parse([]byte(src), testFile, env.opts())
	if err == nil {
		return ""
	}
	return err.Error()
}

// serverOpts compares Servers field by field, ignoring the unexported
// as-written copy (tested through Redacted).
var serverOpts = cmp.Options{cmpopts.IgnoreUnexported(Server{}, Config{})}

// stdio returns a server with Parse's defaults for a stdio command.
func stdio(name, command string, args ...string) *Server {
	return &Server{
		Name: name, Transport: TransportStdio, Command: command, Args: args,
		Enabled: true, StartupTimeout: DefaultStartupTimeout, CallTimeout: DefaultCallTimeout, Prefix: name,
		Trust: TrustUntrusted, Elicitation: true, Roots: true, Images: true,
		Lifecycle: Lifecycle{StartupAttempts: DefaultStartupAttempts, RetryAfter: DefaultRetryAfter, Approval: ApprovalAuto, OnDrift: DriftHold},
	}
}

// remote returns a server with Parse's defaults for an http or sse URL.
func remote(name string, tr Transport, url string) *Server {
	return &Server{
		Name: name, Transport: tr, URL: url,
		Enabled: true, StartupTimeout: DefaultStartupTimeout, CallTimeout: DefaultCallTimeout, Prefix: name,
		Trust: TrustUntrusted, Elicitation: true, Roots: true, Images: true,
		Lifecycle: Lifecycle{StartupAttempts: DefaultStartupAttempts, RetryAfter: DefaultRetryAfter, Approval: ApprovalAuto, OnDrift: DriftHold},
	}
}

// with applies f to s and returns s, for one-line test fixtures.
func with(s *Server, f func(*Server)) *Server {
	f(s)
	return s
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// trusted marks s as Parse resolves "trust": "trusted".
func trusted(s *Server) *Server {
	s.Trust, s.Sampling, s.Elicitation, s.Roots, s.Images = TrustTrusted, true, true, true, true
	s.Lifecycle.OnDrift = DriftWarn
	return s
}
