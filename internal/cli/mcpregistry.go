package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
)

// registryURLEnv names the environment variable that sets the MCP
// registry `add --registry` and `search --registry` read.
const registryURLEnv = "SWITCHBOARD_REGISTRY_URL"

// registryURLFlag registers --registry-url on fs, bound to u.
func registryURLFlag(fs *pflag.FlagSet, u *string) {
	fs.StringVar(u, "registry-url", "", "the MCP registry at `url` (default $"+registryURLEnv+", else "+mcpregistry.DefaultURL+")")
}

// registryClient is a client of the registry flag names, else of the one
// $SWITCHBOARD_REGISTRY_URL names, else of the official registry.
func (r *run) registryClient(flag string) (*mcpregistry.Client, error) {
	u := flag
	if u == "" {
		u, _ = r.env.LookupEnv(registryURLEnv)
	}
	if u == "" {
		u = mcpregistry.DefaultURL
	}
	return mcpregistry.New(u, nil)
}

// registryFailure reports a registry error: a server or version the
// registry does not have is a usage error (exit 2), anything else an
// upstream failure (exit 3); the code is the error's reason.
func (r *run) registryFailure(err error) int {
	var re *mcpregistry.Error
	if !errors.As(err, &re) {
		return r.failf(ExitUpstream, codeError, "%v", err)
	}
	exit := ExitUpstream
	if re.Reason == mcpregistry.NotFound {
		exit = ExitUsage
	}
	return r.report(exit, failure{Code: string(re.Reason), Message: err.Error(), Retryable: re.Reason == mcpregistry.Unreachable})
}

// installed reports whether command is a program on the PATH of r's
// environment.
func (r *run) installed(command string) bool {
	path, _ := r.env.LookupEnv("PATH")
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		fi, err := os.Stat(filepath.Join(d, command))
		if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// terminalAsker returns an asker when stdin is a terminal, else nil.
func terminalAsker(env Env) *asker {
	f, ok := env.Stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &asker{f, bufio.NewReader(f), env.Stderr}
}

// question is the prompt for q: what it is, its description, its
// choices or default.
func question(q mcpregistry.Question) string {
	s := q.Kind + " " + q.Key
	if q.Description != "" {
		s += " (" + oneLine(q.Description, 100) + ")"
	}
	switch {
	case len(q.Choices) > 0:
		s += fmt.Sprintf(" %v", q.Choices)
	case q.Default != "" && !q.Secret:
		s += " [" + q.Default + "]"
	}
	if !q.Required {
		s += ", optional"
	}
	return launcher.Escape(s) + ": "
}
