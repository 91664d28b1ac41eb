package config_test

import (
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/config"
)

func ExampleNew() {
	files, err := config.Stdio("files", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs")
	if err != nil {
		log.Fatal(err)
	}
	files.DisabledTools = []string{"write_*"}
	gh, err := config.HTTP("github", "https://api.githubcopilot.com/mcp/")
	if err != nil {
		log.Fatal(err)
	}
	gh.Headers = map[string]string{"Authorization": "Bearer " + "token-from-somewhere"}
	cfg, err := config.New(files, gh)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range cfg.Servers {
		fmt.Println(s, s.Trust, s.StartupTimeout, s.CallTimeout)
	}
	// Output:
	// server "files": stdio, enabled, prefix "files" untrusted 10s 1m0s
	// server "github": http, enabled, prefix "github" untrusted 10s 1m0s
}

// TestConstructors: a server made in code is the server its JSON makes,
// its strings taken literally; New refuses what a file may not hold.
func TestConstructors(t *testing.T) {
	s, err := config.Stdio("fs", "npx", "-y", "pkg", "${HOME}/notes")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.Parse([]byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "pkg", "$${HOME}/notes"]}}}`), "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Servers[0], s, cmpopts.IgnoreUnexported(config.Server{})); diff != "" {
		t.Errorf("Stdio differs from its JSON (-json +Stdio):\n%s", diff)
	}
	if s.Args[2] != "${HOME}/notes" {
		t.Errorf("an argument was expanded: %q", s.Args[2])
	}
	if _, err := config.HTTP("web", "ftp://example.com"); err == nil {
		t.Error("HTTP took an ftp URL")
	}
	if _, err := config.Stdio("bad name", "x"); err == nil {
		t.Error("Stdio took a name with a space")
	}
	a, _ := config.Stdio("a", "x")
	if _, err := config.New(a, a); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("New with a server twice: %v", err)
	}
	cfg, err := config.New()
	if err != nil || len(cfg.Servers) != 0 || cfg.Security.OnInjection == "" {
		t.Errorf("New(): %+v %v; want no servers and the default security settings", cfg, err)
	}
}
