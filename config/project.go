package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// Project scope: a ".mcp.json" in the working directory (Claude Code's
// project format, {"mcpServers": {...}}) adds its servers to the user
// configuration. A repository someone clones may carry one, so its servers
// never start until the user has approved the file's exact bytes once
// (`switchboard trust-project`); a changed file needs approval again.

const (
	// ProjectFileName is the project configuration's name in the
	// working directory.
	ProjectFileName = ".mcp.json"
	// TrustFileName is the file in Switchboard's home that records the
	// approved project files: each one's absolute path and the SHA-256 of
	// the exact bytes approved.
	TrustFileName = "trusted-projects.json"

	// CodeProjectUntrusted is the [UnusableError] code of a server from a
	// project file whose content has not been approved.
	CodeProjectUntrusted = "project_untrusted"
)

// ErrProjectUntrusted is wrapped by the [UnusableError] of a server from a
// project file that is not trusted yet.
var ErrProjectUntrusted = errors.New("project file not trusted")

// A Project is a project file as read: its bytes, their digest and the
// configuration they parse to.
type Project struct {
	// Path is the file's absolute path.
	Path string
	// Data are the file's exact bytes; Config was parsed from them and
	// Sum is their digest, so what is approved is what runs.
	Data []byte
	// Sum is "sha256:" and the hex SHA-256 of Data.
	Sum string
	// Config is the parsed file. Its servers have Project set to Path.
	Config *Config
}

// LoadProject reads and parses dir's project file (ProjectFileName). It
// returns nil and no error when there is none. The file is decoded as
// strictly as the user configuration (errors name it and the JSON path),
// and holds servers only: "mcpServers" (or "servers") and "$schema"; the
// settings that govern every server (security, policy, context, store)
// are the user's alone.
func LoadProject(dir string, opts *LoadOptions) (*Project, error) {
	path, err := filepath.Abs(filepath.Join(dir, ProjectFileName))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &Error{File: path, Msg: "is a directory, not a file"}
	}
	data, err := bytesize.ReadAll(f, MaxFileSize)
	if err != nil {
		return nil, readError(path, err)
	}
	cfg, err := parseAs(data, path, opts.lookupEnv(), true)
	if err != nil {
		return nil, err
	}
	for _, s := range cfg.Servers {
		s.Project = path
	}
	sum := sha256.Sum256(data)
	return &Project{Path: path, Data: data, Sum: "sha256:" + hex.EncodeToString(sum[:]), Config: cfg}, nil
}

// projectRootFields are the top-level fields a project file may have.
var projectRootFields = []string{"mcpServers", "servers", "inputs", "$schema"}

// WithProject returns a copy of c with p's servers added, and warnings for
// the ones left out. A project server whose name (ignoring case) or
// prefix a user server has is left out: the user's wins. Unless trusted
// (p's exact bytes approved, see [TrustedProject]), every project server
// is unusable (CodeProjectUntrusted) and is never started. c is not
// modified; p's servers are, and the result shares them: call it once per
// loaded Project.
func (c *Config) WithProject(p *Project, trusted bool) (*Config, []string) {
	if p == nil {
		return c, nil
	}
	out := *c
	out.Servers = slices.Clone(c.Servers)
	out.Project = p.Path
	names, prefixes := map[string]bool{}, map[string]bool{}
	for _, s := range c.Servers {
		names[strings.ToLower(s.Name)] = true
		if s.Prefix != "" {
			prefixes[strings.ToLower(s.Prefix)] = true
		}
	}
	var warnings []string
	for _, s := range p.Config.Servers {
		switch {
		case names[strings.ToLower(s.Name)]:
			warnings = append(warnings, fmt.Sprintf("server %q in %s is ignored: the user configuration has a server of that name", s.Name, p.Path))
			continue
		case s.Prefix != "" && prefixes[strings.ToLower(s.Prefix)]:
			warnings = append(warnings, fmt.Sprintf("server %q in %s is ignored: its prefix %q is a user server's", s.Name, p.Path, s.Prefix))
			continue
		}
		if !trusted {
			s.Unusable = &UnusableError{Code: CodeProjectUntrusted, File: p.Path, Server: s.Name}
			s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Headers = "", nil, nil, "", "", nil
		}
		names[strings.ToLower(s.Name)] = true
		if s.Prefix != "" {
			prefixes[strings.ToLower(s.Prefix)] = true
		}
		out.Servers = append(out.Servers, s)
	}
	slices.SortFunc(out.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	return &out, warnings
}

// trustFile is the JSON form of TrustFileName.
type trustFile struct {
	// Projects maps a project file's absolute path to the Sum approved.
	Projects map[string]string `json:"projects"`
}

// readTrust reads home's trust file; a missing file is empty. A file that
// group or others may read or change, or that another user owns, is
// refused (confedit.CheckPrivate): whoever can write it can make any
// project file run.
func readTrust(home string) (trustFile, error) {
	path := filepath.Join(home, TrustFileName)
	t := trustFile{Projects: map[string]string{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, readError(path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return t, readError(path, err)
	}
	if err := confedit.CheckPrivate(path, fi, "the project files you trust"); err != nil {
		return t, fmt.Errorf("config: refusing to trust project files: %w", err)
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return t, &Error{File: path, Msg: "invalid JSON: " + err.Error()}
	}
	if t.Projects == nil {
		t.Projects = map[string]string{}
	}
	return t, nil
}

// TrustedProject reports whether p's exact content has been approved in
// home's trust file.
func TrustedProject(home string, p *Project) (bool, error) {
	t, err := readTrust(home)
	if err != nil {
		return false, err
	}
	return t.Projects[p.Path] == p.Sum, nil
}

// ProjectStatus says whether p was approved: "trusted", "changed" (another
// content of the same file was) or "untrusted".
func ProjectStatus(home string, p *Project) (string, error) {
	t, err := readTrust(home)
	if err != nil {
		return "", err
	}
	switch sum, ok := t.Projects[p.Path]; {
	case sum == p.Sum:
		return "trusted", nil
	case ok:
		return "changed", nil
	}
	return "untrusted", nil
}

// TrustProject records p's content as approved in home's trust file
// (mode 0600, written to a temporary file and renamed over the old one).
func TrustProject(home string, p *Project) error {
	t, err := readTrust(home)
	if err != nil {
		return err
	}
	t.Projects[p.Path] = p.Sum
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	err = confedit.WriteAtomic(filepath.Join(home, TrustFileName), append(data, '\n'), 0o600)
	if err != nil {
		return fmt.Errorf("config: recording trust in %s: %w", filepath.Join(home, TrustFileName), err)
	}
	return nil
}

// untrustedMsg is the UnusableError message of CodeProjectUntrusted.
func untrustedMsg(e *UnusableError) string {
	return "server " + strconv.Quote(e.Server) + ": it comes from " + e.File +
		", which is not trusted yet: run 'switchboard trust-project' in its directory to review and trust it"
}
