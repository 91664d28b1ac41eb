package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApprovalsParse(t *testing.T) {
	src := `{"mcpServers": {}, "policy": {
	  "approve": {"tools": ["gh:push_*"], "destructive": true, "openWorld": true, "unknownHints": true, "trust": ["untrusted", "sandboxed"], "expiryMs": 60000, "report": true},
	  "flow": {"mode": "refuse", "presets": false, "labels": {"gh:get_*": ["private", "untrusted"], "gh:create_*": ["outward"]}}
	}}`
	cfg, err := Parse([]byte(src), testFile, fakeEnv{}.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantA := Approve{Tools: []string{"gh:push_*"}, Destructive: true, OpenWorld: true, Unknown: true,
		Trust: []Trust{TrustUntrusted, TrustSandboxed}, Expiry: time.Minute, Report: true}
	if diff := cmp.Diff(wantA, cfg.Policy.Approve); diff != "" {
		t.Errorf("Approve (-want +got):\n%s", diff)
	}
	wantF := Flow{Mode: FlowRefuse, NoPresets: true, Labels: []FlowLabels{
		{Pattern: "gh:get_*", Labels: []string{"private", "untrusted"}}, {Pattern: "gh:create_*", Labels: []string{"outward"}}}}
	if diff := cmp.Diff(wantF, cfg.Policy.Flow); diff != "" {
		t.Errorf("Flow (-want +got):\n%s", diff)
	}

	// The defaults: nothing held, the flow guard reporting only.
	cfg, err = Parse([]byte(`{"mcpServers": {}}`), testFile, fakeEnv{}.opts())
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Policy.Approve.WithDefaults(); a.Expiry != DefaultApprovalExpiry || len(a.Tools) > 0 || a.Destructive || a.OpenWorld || a.Trust != nil {
		t.Errorf("default Approve = %+v", a)
	}
	if f := cfg.Policy.Flow.WithDefaults(); f.Mode != FlowReport || f.NoPresets {
		t.Errorf("default Flow = %+v", f)
	}
}

func TestApprovalsParseErrors(t *testing.T) {
	const F = testFile + ": "
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"bad glob", `{"mcpServers": {}, "policy": {"approve": {"tools": ["a:[x"]}}}`, []string{
			F + `$.policy.approve.tools[0]: malformed pattern "a:[x": unterminated character class at offset 3`,
		}},
		{"bad trust", `{"mcpServers": {}, "policy": {"approve": {"trust": ["full"]}}}`, []string{
			F + `$.policy.approve.trust[0]: unknown trust level "full": want "trusted", "untrusted" or "sandboxed"`,
		}},
		{"unknown field", `{"mcpServers": {}, "policy": {"approve": {"destructiv": true}}}`, []string{
			F + `$.policy.approve.destructiv: unknown field "destructiv" (did you mean "destructive"?)`,
		}},
		{"bad mode", `{"mcpServers": {}, "policy": {"flow": {"mode": "block"}}}`, []string{
			F + `$.policy.flow.mode: unknown value "block": want "off", "report", "approve" or "refuse"`,
		}},
		{"bad label", `{"mcpServers": {}, "policy": {"flow": {"labels": {"gh:*": ["secret"]}}}}`, []string{
			F + `$.policy.flow.labels["gh:*"][0]: unknown label "secret": want "private", "untrusted" or "outward"`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErr(t, tt.src, fakeEnv{})
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), got); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApprovalsValidate: a hand-built configuration's policy.approve and
// policy.flow are checked as a parsed one's are.
func TestApprovalsValidate(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {}}`), testFile, fakeEnv{}.opts())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy.Approve = Approve{Tools: []string{"a:[x"}, Trust: []Trust{"full"}}
	cfg.Policy.Flow = Flow{Mode: "block", Labels: []FlowLabels{{Pattern: "gh:*", Labels: []string{"secret"}}}}
	err = cfg.Validate()
	for _, want := range []string{"policy.approve.tools[0]", "policy.approve.trust[0]", "policy.flow.mode", `unknown label "secret"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to name %s", err, want)
		}
	}
}
