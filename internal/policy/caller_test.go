package policy

import "testing"

func TestRulesLimitedToClientsAndProfiles(t *testing.T) {
	e, err := New(Config{Rules: []Rule{
		{Action: Deny, Pattern: "gh:*", Clients: []string{"ci"}},
		{Action: Deny, Pattern: "*:write_*", Profiles: []string{"readonly"}},
		{Action: Allow, Pattern: "db:*", Clients: []string{"alice"}, Profiles: []string{"dev"}},
	}, Default: Deny})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, caller, profile string
		want                      Verdict
		rule                      int
	}{
		{"client rule matches its client", "gh:issues", "ci", "", Refuse, 0},
		{"client rule skips another client", "gh:issues", "alice", "", Refuse, -1},
		{"profile rule matches its profile", "fs:write_file", "alice", "readonly", Refuse, 1},
		{"profile rule skips no profile", "fs:write_file", "alice", "", Refuse, -1},
		{"both limits met", "db:query", "alice", "dev", Permit, 2},
		{"one limit not met", "db:query", "alice", "readonly", Refuse, -1},
		{"anonymous", "db:query", "", "", Refuse, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.Decide(Request{ID: tt.id, Trust: Trusted, Caller: tt.caller, Profile: tt.profile})
			if d.Verdict != tt.want || d.Rule != tt.rule {
				t.Fatalf("Decide = %+v, want %s by rule %d", d, tt.want, tt.rule)
			}
		})
	}
	if got := (Rule{Action: Deny, Pattern: "gh:*", Clients: []string{"ci", "bot"}, Profiles: []string{"ro"}}).String(); got != "deny gh:* clients=ci,bot profiles=ro" {
		t.Fatalf("String = %q", got)
	}
}
