package host

import "testing"

// TestGuardRow: which decisions of the launch pins, the sandbox and the
// elicitation guard leave an audit row, under which tool and code.
func TestGuardRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev         ServerEvent
		tool, code string // "" for no row
	}{
		{ServerEvent{Server: "gh", Kind: EventLaunch, Decision: LaunchPinned}, "", ""},
		{ServerEvent{Server: "gh", Kind: EventLaunch, Decision: LaunchHeld}, "gh:(launch)", "launch_held"},
		{ServerEvent{Server: "gh", Kind: EventLaunch, Decision: LaunchWarned}, "gh:(launch)", "launch_warned"},
		{ServerEvent{Server: "gh", Kind: EventLaunch, Decision: LaunchApproved}, "", ""},
		{ServerEvent{Server: "fs", Kind: EventSandbox, Outcome: SandboxEnforced}, "", ""},
		{ServerEvent{Server: "fs", Kind: EventSandbox, Outcome: SandboxRefused}, "fs:(sandbox)", "sandbox_refused"},
		{ServerEvent{Server: "fs", Kind: EventSandboxLimit}, "fs:(sandbox)", "sandbox_limit"},
		{ServerEvent{Server: "fs", Kind: EventExited}, "", ""},
		{ServerEvent{Server: "x", Kind: EventElicitation, Decision: SecretBlocked, Rule: "token"}, "x:(elicitation)", "elicitation_blocked"},
		{ServerEvent{Server: "x", Kind: EventElicitation, Decision: SecretFlagged, Rule: "password"}, "x:(elicitation)", "elicitation_flagged"},
		{ServerEvent{Server: "x", Kind: EventElicitation, Decision: SecretWouldBlock, Rule: "card"}, "x:(elicitation)", "elicitation_would_block"},
	}
	for _, tt := range tests {
		row := guardRow(tt.ev)
		switch {
		case row == nil && tt.tool == "":
		case row == nil || row.Tool != tt.tool || row.Code != tt.code || row.Outcome != OutcomeGuard || row.Server != tt.ev.Server:
			t.Errorf("%+v: row %+v, want %s %s", tt.ev, row, tt.tool, tt.code)
		}
	}
}
