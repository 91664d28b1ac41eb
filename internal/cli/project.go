package cli

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// trustFlags are the flags of trust-project.
type trustFlags struct {
	yes  bool // --yes: trust without asking
	show bool // --show: only show
}

func trustProjectCommand(*run) *command {
	f := &trustFlags{}
	return &command{
		name: "trust-project", args: "[--show] [--yes]",
		summary:  "review the servers the working directory's .mcp.json would run, and trust that exact content (a changed file needs trust again)",
		examples: []string{"switchboard trust-project --show", "switchboard trust-project", "switchboard trust-project --yes"},
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&f.yes, "yes", false, "trust the file without asking")
			fs.BoolVar(&f.show, "show", false, "only show the servers the file would run and whether it is trusted")
		},
		run: f.run,
	}
}

// projectServer is one server of a project file as trust-project shows
// it: its fields as written, ${VAR} references unexpanded and literal env
// and header values hidden (config.Server.Redacted).
type projectServer struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   []string          `json:"headers,omitempty"` // names only
	Enabled   bool              `json:"enabled"`
}

// projectReview is trust-project's --json output.
type projectReview struct {
	File    string          `json:"file"`
	SHA256  string          `json:"sha256"`
	Status  string          `json:"status"` // trusted, untrusted, changed
	Servers []projectServer `json:"servers"`
}

// runTrustProject shows the servers the working directory's project file
// would run and, unless --show, records its exact content as trusted once
// a person at a terminal (or --yes) agrees.
func (f *trustFlags) run(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	p, err := config.LoadProject(r.env.Dir, &config.LoadOptions{LookupEnv: r.env.LookupEnv})
	if err != nil {
		return r.configError(err)
	}
	if p == nil {
		return r.failf(ExitUsage, codeUsage, "there is no %s in %s", config.ProjectFileName, absPath(r.workDir()))
	}
	home, err := r.homeDir()
	if err != nil {
		return r.configError(err)
	}
	status, err := config.ProjectStatus(home, p)
	if err != nil {
		return r.configError(err)
	}
	review := projectReview{File: p.Path, SHA256: strings.TrimPrefix(p.Sum, "sha256:"), Status: status}
	for _, s := range p.Config.Servers {
		v := s.Redacted()
		ps := projectServer{Name: v.Name, Transport: string(v.Transport), Command: v.Command, Args: v.Args,
			Env: v.Env, Cwd: v.Cwd, URL: v.URL, Enabled: v.Enabled}
		for k := range v.Headers {
			ps.Headers = append(ps.Headers, k)
		}
		slices.Sort(ps.Headers)
		review.Servers = append(review.Servers, ps)
	}
	if f.show || status == "trusted" {
		if r.json {
			return r.printJSON(review)
		}
		printReview(r, review)
		if status == "trusted" && !f.show {
			fmt.Fprintf(r.env.Stdout, "already trusted: nothing to do\n")
		}
		return ExitOK
	}
	if !r.json {
		printReview(r, review)
	}
	if !f.yes {
		f, ok := r.env.Stdin.(*os.File)
		if !ok || !isTerminal(f) {
			return r.failf(ExitUsage, codeUsage, "not trusted: review the servers above, then confirm at a terminal or pass --yes")
		}
		fmt.Fprintf(r.env.Stderr, "Trust this exact file and let Switchboard start these servers? [y/N] ")
		line, _ := bufio.NewReader(f).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return r.failf(ExitUsage, codeUsage, "not trusted")
		}
	}
	if err := config.TrustProject(home, p); err != nil {
		return r.configError(err)
	}
	review.Status = "trusted"
	if r.json {
		return r.printJSON(review)
	}
	fmt.Fprintf(r.env.Stdout, "trusted %s (sha256 %s): its servers start from now on (a running serve takes them on its next reload); a change to the file needs trust-project again\n",
		launcher.Escape(p.Path), review.SHA256)
	return ExitOK
}

// printReview lists what a project file would run, everything escaped.
func printReview(r *run, v projectReview) {
	w := r.env.Stdout
	state := map[string]string{
		"trusted":   "trusted",
		"untrusted": "not trusted",
		"changed":   "CHANGED since it was trusted: not trusted",
	}[v.Status]
	fmt.Fprintf(w, "%s (sha256 %s): %s\n", launcher.Escape(v.File), v.SHA256, state)
	if len(v.Servers) == 0 {
		fmt.Fprintf(w, "it names no servers\n")
		return
	}
	fmt.Fprintf(w, "servers it runs:\n")
	for _, s := range v.Servers {
		disabled := ""
		if !s.Enabled {
			disabled = " (disabled)"
		}
		if s.Transport == string(config.TransportStdio) {
			argv := []string{shellWord(s.Command)}
			for _, a := range s.Args {
				argv = append(argv, shellWord(a))
			}
			fmt.Fprintf(w, "  %s%s: runs %s\n", launcher.Escape(s.Name), disabled, strings.Join(argv, " "))
			if s.Cwd != "" {
				fmt.Fprintf(w, "      in %s\n", launcher.Escape(s.Cwd))
			}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				fmt.Fprintf(w, "      env %s=%s\n", launcher.Escape(k), launcher.Escape(s.Env[k]))
			}
			continue
		}
		fmt.Fprintf(w, "  %s%s: connects to %s (%s)\n", launcher.Escape(s.Name), disabled, launcher.Escape(s.URL), s.Transport)
		if len(s.Headers) > 0 {
			fmt.Fprintf(w, "      headers: %s\n", launcher.Escape(strings.Join(s.Headers, ", ")))
		}
	}
	fmt.Fprintf(w, "(literal env and header values are shown as [redacted]: read %s for them)\n", launcher.Escape(filepath.Base(v.File)))
}

// shellWord quotes s for display when it is empty or holds characters a
// shell would split on or interpret, and escapes it.
func shellWord(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
		return launcher.Escape(fmt.Sprintf("%q", s))
	}
	return launcher.Escape(s)
}

// workDir is the working directory, where a project's .mcp.json is read
// and written: Env.Dir, else the process's.
func (r *run) workDir() string {
	if r.env.Dir != "" {
		return r.env.Dir
	}
	dir, _ := os.Getwd()
	return dir
}
