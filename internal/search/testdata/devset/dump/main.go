// Command dump captures the tools/list of the dev set's MCP servers into
// ../tools, one file per server, so that the dev-set eval runs offline.
//
//	go run ./internal/search/testdata/devset/dump -peers .cache/devpeers [server...]
//
// It reads ../servers.json (package, version, how to start it, dummy
// environment) and starts each server over stdio from the npm packages
// installed under -peers (node_modules), each in a network namespace of
// its own (unshare -n, so run it as root). Dummy tokens are enough: every
// server listed lists its tools without reaching its service.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type server struct {
	Server  string            `json:"server"`
	Package string            `json:"package"`
	Version string            `json:"version"`
	Split   string            `json:"split"`
	Bin     string            `json:"bin"` // script under node_modules/<package>
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type toolFile struct {
	Server  string `json:"server"`
	Source  string `json:"source"`
	Package string `json:"package"`
	Version string `json:"version"`
	Split   string `json:"split"`
	Tools   []tool `json:"tools"`
}

func main() {
	peers := flag.String("peers", ".cache/devpeers", "directory holding node_modules with the servers")
	dir := flag.String("dir", "internal/search/testdata/devset", "dev set directory")
	node := flag.String("node", "node", "the node binary (some servers need Node 22)")
	flag.Parse()
	b, err := os.ReadFile(filepath.Join(*dir, "servers.json"))
	if err != nil {
		log.Fatal(err)
	}
	var servers []server
	if err := json.Unmarshal(b, &servers); err != nil {
		log.Fatal(err)
	}
	failed := false
	for _, s := range servers {
		if flag.NArg() > 0 && !slices.Contains(flag.Args(), s.Server) {
			continue
		}
		if err := dump(*node, *peers, *dir, s); err != nil {
			log.Printf("%s: %v", s.Server, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func dump(node, peers, dir string, s server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pkgDir, err := filepath.Abs(filepath.Join(peers, "node_modules", s.Package))
	if err != nil {
		return err
	}
	pj, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return err
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(pj, &meta); err != nil {
		return err
	}
	if meta.Version != s.Version {
		return fmt.Errorf("installed %s, want %s", meta.Version, s.Version)
	}
	home, err := os.MkdirTemp("", "devset-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	// unshare -n: a network namespace of its own, so that no server
	// reaches anything while it starts (telemetry, update checks).
	cmd := exec.Command("unshare", append([]string{"-n", node, filepath.Join(pkgDir, s.Bin)}, s.Args...)...)
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NODE_ENV=production"}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "devset-dump", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	out := toolFile{
		Server: s.Server, Package: s.Package, Version: s.Version, Split: s.Split,
		Source: fmt.Sprintf("tools/list of %s@%s (npm), captured over stdio by testdata/devset/dump", s.Package, s.Version),
	}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		in, err := json.Marshal(t.InputSchema)
		if err != nil {
			return err
		}
		out.Tools = append(out.Tools, tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in})
	}
	if len(out.Tools) == 0 {
		return fmt.Errorf("no tools")
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	name := filepath.Join(dir, "tools", strings.ReplaceAll(s.Server, "/", "_")+".json")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	log.Printf("%s: %d tools", s.Server, len(out.Tools))
	return os.WriteFile(name, append(b, '\n'), 0o644)
}
