package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/codemode"
)

// TestInnerError: a decision about the caller stops the script, naming
// the call and those before it; any other failure is a ToolError the
// script may catch.
func TestInnerError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code fault.Code
		stop bool
	}{
		{fault.CodePolicyBlocked, true},
		{fault.CodeRateLimited, true},
		{fault.CodeDefinitionChanged, true},
		{fault.CodeHeldInjection, true},
		{fault.CodeLaunchChanged, true},
		{fault.CodeNeedsLogin, true},
		{fault.CodeApprovalRequired, true},
		{fault.CodeApprovalDenied, true},
		{fault.CodeApprovalExpired, true},
		{fault.CodeFlowBlocked, true},
		{fault.CodeInvalidInput, false},
		{fault.CodeNotFound, false},
		{fault.CodeUnavailable, false},
		{fault.CodeTimeout, false},
		{fault.CodeServerError, false},
		{fault.CodeUnknownOutcome, false},
	} {
		err := innerError("gh__create_issue", []string{"gh__list_issues"}, fault.New(tc.code, "gh", "call", errors.New("why")))
		var te *codemode.ToolError
		switch {
		case tc.stop && (errors.As(err, &te) || fault.CodeOf(err) != tc.code ||
			!strings.Contains(err.Error(), "stopped at call 2, gh__create_issue") || !strings.Contains(err.Error(), "gh__list_issues")):
			t.Errorf("%s: %v, want the script stopped naming the call", tc.code, err)
		case !tc.stop && (!errors.As(err, &te) || te.Code != string(tc.code) || te.Tool != "gh__create_issue"):
			t.Errorf("%s: %v, want a ToolError", tc.code, err)
		}
	}
}
