package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// TestOpenValidates: Open holds a configuration built in code to what a
// file is held to, as Reload does: a server changed into one no file could
// describe is refused, naming it, and nothing starts.
func TestOpenValidates(t *testing.T) {
	t.Parallel()
	s, err := config.Stdio("a", "x")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Command = "" // a stdio server with nothing to run
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true})
	if err == nil {
		h.Close()
		t.Fatal("Open took a stdio server without a command")
	}
	if !strings.Contains(err.Error(), "mcpServers.a") || !strings.Contains(err.Error(), "command") {
		t.Errorf("Open: %v; want the server and the field named", err)
	}
}
