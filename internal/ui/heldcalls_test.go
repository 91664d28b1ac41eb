package ui_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// TestHeldCallOnThePage: a call policy.approve holds is listed on the
// page, behind the login, with its arguments; approving it there lets the
// same call through once, recorded as the status page's; the approval
// view a client's URL elicitation opens asks for the login first.
func TestHeldCallOnThePage(t *testing.T) {
	exe, _ := os.Executable()
	doc, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}, "eager": true}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"demo:echo"}}},
	})
	cfg, err := config.Parse(doc, "test.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := pageOn(t, cfg, st, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))

	ctx := context.Background()
	args := json.RawMessage(`{"text":"launch the rockets"}`)
	if _, err := p.host.Call(ctx, "demo__echo", args, nil); err == nil || !strings.Contains(err.Error(), "approval_required") {
		t.Fatalf("call: %v, want approval_required", err)
	}
	held, err := p.host.HeldCalls(ctx, store.ApprovalPending)
	if err != nil || len(held) != 1 {
		t.Fatalf("held = %v, %v", held, err)
	}
	id := held[0].ID

	if _, body := p.get(t, "/ui/approvals/"+id); !strings.Contains(body, `name="token"`) || strings.Contains(body, "launch the rockets") {
		t.Fatalf("the approval view before the login shows more than the login form:\n%s", body)
	}
	csrf := p.login(t)
	_, body := p.get(t, "/ui")
	if !strings.Contains(body, `id="call-`+id+`"`) || !strings.Contains(body, "launch the rockets") {
		t.Fatalf("the page does not list the held call with its arguments:\n%s", body)
	}
	if _, body = p.post(t, "/ui/action", url.Values{"csrf": {csrf}, "op": {"approve-call"}, "target": {id}}); !strings.Contains(body, "approved the call of demo:echo") {
		t.Fatalf("approving on the page:\n%s", body)
	}
	res, err := p.host.Call(ctx, "demo__echo", args, nil)
	if err != nil || !strings.Contains(res.Text, "launch the rockets") {
		t.Fatalf("approved call = %v, %v", res, err)
	}
	got, err := st.Approval(ctx, id)
	if err != nil || got.State != store.ApprovalUsed || got.DecidedBy != "ui:operator" {
		t.Errorf("approval = %+v, %v; want used, decided by ui:operator", got, err)
	}
	if _, body = p.post(t, "/ui/action", url.Values{"csrf": {"wrong"}, "op": {"deny-call"}, "target": {id}}); !strings.Contains(body, "forbidden") {
		t.Errorf("a decision without the session's CSRF token: %s", body)
	}
}
