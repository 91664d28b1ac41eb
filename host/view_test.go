package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestViewOfAProfile: a profile's view gives the profile's tools, its own
// deferred tier and tool_search, its servers' instructions; a tool outside
// it fails as one that does not exist, by every name it has; a deferred
// tool is callable by its exact name; what its search finds is listed for
// that profile alone.
func TestViewOfAProfile(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context": map[string]any{"deferTools": true, "capabilityTools": false},
		"mcpServers": map[string]any{
			"s":     child(t, testkit.ModeServer, map[string]any{"eager": true}),
			"other": child(t, testkit.ModeServer, map[string]any{"eager": true}),
		},
		"profiles": map[string]any{"p": map[string]any{"servers": []string{"s"}}},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	for _, s := range []string{"s", "other"} {
		if err := h.Ready(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	v := h.View(host.Caller{Profile: "p"})
	names := func(tools []host.Tool) []string {
		var out []string
		for _, t := range tools {
			out = append(out, t.Name)
		}
		return out
	}
	if got := names(v.Tools()); !slices.Equal(got, []string{host.DescribeTool, host.ToolSearch, host.ListServersTool}) {
		t.Fatalf("the profile's model tools = %v, want only the search's built-ins (the rest deferred)", got)
	}
	for _, in := range v.Instructions() {
		if in.Server != "s" {
			t.Errorf("instructions of %q in the profile's view", in.Server)
		}
	}
	if len(v.Instructions()) == 0 {
		t.Error("no instructions of s in the profile's view")
	}

	// A deferred tool of the profile, by its exact name.
	res, err := v.Call(ctx, "s__big", json.RawMessage(`{"bytes":3}`), nil)
	if err != nil || res.Text != "bbb" {
		t.Fatalf("s__big through the view: %v %v", res, err)
	}
	// Outside the profile: as a tool of a server that does not exist.
	for _, name := range []string{"other__echo", "other:echo"} {
		none := strings.Replace(name, "other", "nosch", 1)
		_, err := v.Call(ctx, name, json.RawMessage(`{"text":"hi"}`), nil)
		_, nerr := v.Call(ctx, none, json.RawMessage(`{"text":"hi"}`), nil)
		if err == nil || nerr == nil || strings.ReplaceAll(err.Error(), name, none) != nerr.Error() {
			t.Errorf("%s outside the view: %v, want as %s: %v", name, err, none, nerr)
		}
		if _, err := v.Find(ctx, name); err == nil {
			t.Errorf("Find(%q) found a tool outside the view", name)
		}
	}

	// The profile's search finds only its tools, and lists them for it.
	hits, err := v.Search(ctx, "large text result", 20)
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %v %v", hits, err)
	}
	for _, hit := range hits {
		if hit.Server != "s" {
			t.Errorf("the profile's search found %s", hit.ID)
		}
	}
	out, err := v.Call(ctx, host.ToolSearch, json.RawMessage(`{"query":"large text result","k":1}`), nil)
	if err != nil || !strings.Contains(out.Text, "\ns__big(") {
		t.Fatalf("tool_search in the profile: %v %v", out, err)
	}
	if !slices.Contains(names(v.Tools()), "s__big") {
		t.Errorf("what the profile's search found is not listed for it: %v", names(v.Tools()))
	}
	if slices.Contains(names(h.ModelTools()), "s__big") {
		t.Error("what the profile's search found is listed for the operator too")
	}

	// A server outside the profile takes no unsubscribe from it, as one
	// that does not exist.
	err = v.Unsubscribe(ctx, "other", "test://x")
	if nerr := v.Unsubscribe(ctx, "nosch", "test://x"); err == nil || nerr == nil || strings.ReplaceAll(err.Error(), "other", "nosch") != nerr.Error() {
		t.Errorf("unsubscribe outside the view: %v, want as a server that does not exist: %v", err, nerr)
	}
}

// TestViewProviderTools: a view's provider tools are its own, deferred
// ones included, and their Call keeps to the view.
func TestViewProviderTools(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context": map[string]any{"deferTools": true, "capabilityTools": false},
		"mcpServers": map[string]any{
			"s":     child(t, testkit.ModeServer, map[string]any{"eager": true}),
			"other": child(t, testkit.ModeServer, map[string]any{"eager": true}),
		},
		"profiles": map[string]any{"p": map[string]any{"servers": []string{"s"}}},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := h.View(host.Caller{}).ProviderTools("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(all.JSON()); !strings.Contains(got, `"other__echo"`) || !strings.Contains(got, `"s__big"`) {
		t.Errorf("the operator's anthropic tools lack a server's: %s", got)
	}
	p, err := h.View(host.Caller{Profile: "p"}).ProviderTools("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.JSON())
	if strings.Contains(got, "other") || !strings.Contains(got, `"s__big"`) || !strings.Contains(got, `"defer_loading":true`) {
		t.Errorf("the profile's anthropic tools, want s's deferred and nothing of other's: %s", got)
	}
	if _, err := p.Call(ctx, "other__echo", json.RawMessage(`{"text":"hi"}`), nil); err == nil {
		t.Error("the profile's provider tools called a tool outside it")
	}
	if res, err := p.Call(ctx, "s__echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil || res.IsError {
		t.Errorf("s__echo through the profile's provider tools: %v %v", res, err)
	}
}
