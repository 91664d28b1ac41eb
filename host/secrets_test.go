package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// secretsRig is a host over the test server that reveals credentials
// ("t", ModeSecrets) and, trusted, the same server ("trusted"), with
// security.secrets set to secrets; it keeps the call records.
type secretsRig struct {
	h    *host.Host
	mu   sync.Mutex
	recs []host.CallRecord
}

func openSecrets(t *testing.T, secrets map[string]any) *secretsRig {
	t.Helper()
	doc := map[string]any{"mcpServers": map[string]any{
		"t":       child(t, testkit.ModeSecrets, nil),
		"trusted": child(t, testkit.ModeSecrets, map[string]any{"trust": "trusted"}),
	}}
	if secrets != nil {
		doc["security"] = map[string]any{"secrets": secrets}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &secretsRig{}
	r.h = openWith(t, cfg, fastOptsWith(r))
	return r
}

// fastOptsWith is fastOpts with r keeping the call records.
func fastOptsWith(r *secretsRig) *host.Options {
	return &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnCall: func(c host.CallRecord) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.recs = append(r.recs, c)
	}}
}

// last returns the decisions of the last call recorded, as
// "direction:rule:action" strings.
func (r *secretsRig) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.recs[len(r.recs)-1].Secrets {
		out = append(out, d.Direction+":"+d.Rule+":"+d.Action)
	}
	return out
}

// TestSecretsInResults: by default a GitHub token and a JWT (verified
// formats) in a result's text and structuredContent are replaced in place
// by markers, and the rest of the result is byte for byte what the server
// sent (which a host that does not look returns); the connection string's
// password (shaped only) is flagged.
func TestSecretsInResults(t *testing.T) {
	t.Parallel()
	off := openSecrets(t, map[string]any{"results": "off"})
	orig := call(t, off.h, "t__reveal", `{}`).Raw
	if !strings.Contains(string(orig), testkit.RevealToken) || !strings.Contains(string(orig), `"structuredContent"`) {
		t.Fatalf("the server's result lacks what the test needs: %s", orig)
	}
	if got := off.last(); len(got) != 0 {
		t.Errorf("results off: decisions %v", got)
	}

	r := openSecrets(t, nil)
	res := call(t, r.h, "t__reveal", `{}`)
	want := strings.NewReplacer(testkit.RevealToken, "[redacted: github-token]", testkit.RevealJWT, "[redacted: jwt]").Replace(string(orig))
	if diff := cmp.Diff(want, string(res.Raw)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if strings.Contains(res.Text, testkit.RevealToken) || strings.Contains(res.Text, testkit.RevealJWT) || !strings.Contains(res.Text, testkit.RevealDSN) {
		t.Errorf("text for the model = %q", res.Text)
	}
	wantDecisions := []string{
		"results:github-token:redacted", "results:jwt:redacted", "results:url-password:flagged",
		"results:jwt:redacted", "results:github-token:redacted", // structuredContent: "session", then "token"
	}
	if diff := cmp.Diff(wantDecisions, r.last()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// TestSecretsInArguments: a token in the arguments of a call to an
// untrusted server is flagged by default and refused with "block", by a
// policy fault that names the rule and the setting; a trusted server is
// only flagged.
func TestSecretsInArguments(t *testing.T) {
	t.Parallel()
	args := `{"text":"use ` + testkit.RevealToken + `"}`
	r := openSecrets(t, nil)
	res := call(t, r.h, "t__echo", args)
	if strings.Contains(string(res.Raw), testkit.RevealToken) {
		t.Errorf("the echoed token was not redacted: %s", res.Raw)
	}
	if diff := cmp.Diff([]string{"arguments:github-token:flagged", "results:github-token:redacted"}, r.last()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}

	b := openSecrets(t, map[string]any{"arguments": "block"})
	_, err := b.h.Call(context.Background(), "t__echo", json.RawMessage(args), nil)
	if fault.CodeOf(err) != fault.CodePolicyBlocked || !strings.Contains(err.Error(), "github-token") || !strings.Contains(err.Error(), "security.secrets.arguments") {
		t.Fatalf("blocked call: %v", err)
	}
	if strings.Contains(err.Error(), testkit.RevealToken) {
		t.Errorf("the refusal quotes the token: %v", err)
	}
	if diff := cmp.Diff([]string{"arguments:github-token:blocked"}, b.last()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	call(t, b.h, "trusted__echo", args)
	if got := b.last(); len(got) == 0 || got[0] != "arguments:github-token:flagged" {
		t.Errorf("trusted server: decisions %v, want the argument flagged", got)
	}
}

// TestSecretsReportOnly: report-only mode changes nothing, and records
// what would have happened.
func TestSecretsReportOnly(t *testing.T) {
	t.Parallel()
	off := openSecrets(t, map[string]any{"results": "off"})
	orig := call(t, off.h, "t__reveal", `{}`).Raw

	r := openSecrets(t, map[string]any{"arguments": "block", "report": true})
	if got := call(t, r.h, "t__reveal", `{}`).Raw; string(got) != string(orig) {
		t.Errorf("report only changed the result:\n%s\nwant\n%s", got, orig)
	}
	if diff := cmp.Diff([]string{
		"results:github-token:would_redact", "results:jwt:would_redact", "results:url-password:flagged",
		"results:jwt:would_redact", "results:github-token:would_redact",
	}, r.last()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	res := call(t, r.h, "t__echo", `{"text":"use `+testkit.RevealToken+`"}`)
	if !strings.Contains(res.Text, testkit.RevealToken) {
		t.Errorf("report only: echo = %q", res.Text)
	}
	if diff := cmp.Diff([]string{"arguments:github-token:would_block", "results:github-token:would_redact"}, r.last()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// TestSecretsAudited: the audit row notes each decision, never the
// credential.
func TestSecretsAudited(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": child(t, testkit.ModeSecrets, nil)}})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	call(t, h, "t__echo", `{"text":"`+testkit.RevealToken+`"}`)
	h.Close() // writes the audit rows
	rows, err := st.Calls(context.Background(), store.CallFilter{Server: "t"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("audit rows = %+v, %v", rows, err)
	}
	if want := "arguments:github-token:flagged,results:github-token:redacted"; rows[0].Secrets != want {
		t.Errorf("audit row secrets = %q, want %q", rows[0].Secrets, want)
	}
	if b, _ := json.Marshal(rows[0]); strings.Contains(string(b), testkit.RevealToken[4:20]) {
		t.Errorf("the audit row holds the token: %s", b)
	}
}

// TestSecretsInResourceReads: a resource read through the capability tool
// is screened like a tool result.
func TestSecretsInResourceReads(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": child(t, testkit.ModeSecrets, nil)}})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, h, host.ReadResourceTool, `{"id":"t:test://ticket"}`)
	if strings.Contains(string(res.Raw), testkit.RevealToken) || !strings.Contains(res.Text, "[redacted: github-token]") || !strings.Contains(res.Text, testkit.RevealDSN) {
		t.Errorf("resource read = %s", res.Raw)
	}
	h.Close()
	rows, err := st.Calls(context.Background(), store.CallFilter{Server: "t"})
	if err != nil || len(rows) != 1 || rows[0].Secrets != "results:github-token:redacted,results:jwt:redacted,results:url-password:flagged" {
		t.Errorf("audit rows = %+v, %v", rows, err)
	}
}
