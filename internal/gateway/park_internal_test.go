package gateway

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResumeOnlyOwnParkedCalls: the state of a parked call names the
// gateway that holds it; a gateway resumes only its own, even when it
// holds a call of the same ID, and tells the client of any other to call
// the tool again.
func TestResumeOnlyOwnParkedCalls(t *testing.T) {
	t.Parallel()
	answers := mcp.InputResponseMap{questionKey: &mcp.ElicitResult{Action: "accept"}}
	own := func(id string) string {
		return strings.TrimPrefix((&Gateway{replica: "mine"}).parkedState(id), parkPrefix)
	}
	tests := []struct {
		name  string
		state string // the state's content after parkPrefix
		ok    bool
	}{
		{"own", own("c1"), true},
		{"another replica's", "other.c1", false},
		{"without a replica", "c1", false},
		{"unknown call", own("c2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Gateway{log: slog.New(slog.DiscardHandler), replica: "mine", parked: map[string]*parkedCall{}}
			q := &question{reply: make(chan answer, 1)}
			g.parked["c1"] = &parkedCall{id: "c1", pending: q}
			state := tt.state
			pc, err := g.resume(state, answers)
			if tt.ok {
				if err != nil || pc == nil || len(q.reply) != 1 {
					t.Fatalf("resume(%q) = %v, %v; want the call resumed with the answer", state, pc, err)
				}
				return
			}
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "call the tool again") {
				t.Errorf("resume(%q) = %v; want -32602 saying to call the tool again", state, err)
			}
			if len(q.reply) != 0 || g.parked["c1"] == nil {
				t.Errorf("resume(%q) touched the call parked here", state)
			}
		})
	}
}
