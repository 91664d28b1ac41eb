package upstream

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
)

// TestCheckElicitInput: a 2026-07-28 server's elicitations, which arrive
// as input requests of a call's result, go through Options.CheckElicit
// like a legacy server's: a refusal refuses the round (policy_blocked),
// a changed request replaces its own entry only, and the server's map is
// not written to.
func TestCheckElicitInput(t *testing.T) {
	c := &Conn{server: &config.Server{Name: "s", Elicitation: true}, log: slog.New(slog.DiscardHandler)}
	c.opts.CheckElicit = func(server string, p *mcp.ElicitParams) (*mcp.ElicitParams, error) {
		switch p.Message {
		case "refuse":
			return nil, errors.New("refused")
		case "warn":
			w := *p
			w.Message = "warning: " + p.Message
			return &w, nil
		}
		return p, nil
	}
	plain := &mcp.ElicitParams{Message: "plain"}
	warn := &mcp.ElicitParams{Message: "warn"}
	reqs := mcp.InputRequestMap{"a": plain, "b": warn, "r": &mcp.ListRootsParams{}}
	out, err := c.checkElicitInput(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if out["a"] != plain || out["r"] != reqs["r"] || out["b"].(*mcp.ElicitParams).Message != "warning: warn" {
		t.Errorf("checked round: %+v", out)
	}
	if reqs["b"] != warn {
		t.Error("the server's own map was written to")
	}
	_, err = c.answerInput(context.Background(), nil, "tools/call", 1,
		mcp.InputRequestMap{"a": plain, "x": &mcp.ElicitParams{Message: "refuse"}}, "")
	if fault.CodeOf(err) != fault.CodePolicyBlocked || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("a round with a refused elicitation: %v, want policy_blocked naming it", err)
	}
}
