//go:build unix

package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

// A SandboxError says why a server whose sandbox is "required" did not
// start (see sandbox.RequiredError).
type SandboxError = sandbox.RequiredError

// support is what this kernel offers, detected once.
var support = sync.OnceValue(sandbox.Detect)

// Support returns what this system offers the sandbox, as the launcher
// uses it: without the shim (see [MaybeRunShim]) there is nothing to
// apply it with.
func Support() sandbox.Support {
	s := support()
	if !useShim() {
		return sandbox.Support{OS: runtime.GOOS}
	}
	return s
}

// confinement is one start's sandbox: the policy the shim applies, the
// status reported, and what the launcher made for it (removed by
// release).
type confinement struct {
	policy  sandbox.Policy
	status  sandbox.Status
	env     map[string]string
	netns   bool
	cgroup  *sandbox.Cgroup
	tempDir string
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// confine resolves spec's sandbox for the program at path (nil when spec
// has none), makes its temporary directory, private caches and cgroup,
// and refuses a "required" sandbox that cannot hold here.
func confine(spec Spec, path, searchPath string) (*confinement, error) {
	if spec.Sandbox == nil {
		return nil, nil
	}
	sup := Support()
	c := &confinement{}
	name := unsafeName.ReplaceAllString(spec.Server, "_")
	l := sandbox.Launch{
		Server: spec.Server, Program: path, PATH: searchPath, Args: spec.Args, Dir: spec.Dir, Env: spec.Env,
		SwitchboardHome: spec.SwitchboardHome,
	}
	l.Home, _ = spec.LookupEnv("HOME")
	if spec.CacheDir != "" {
		l.PrivateDir = filepath.Join(spec.CacheDir, name)
	}
	settings := *spec.Sandbox
	mode := settings.Mode
	if mode == "" {
		mode = sandbox.ModeOn
	}
	upgrading := false
	if spec.Upgrade && mode == sandbox.ModeOn && !settings.Explicit && l.PrivateDir != "" {
		if _, err := os.Stat(l.PrivateDir); errors.Is(err, os.ErrNotExist) {
			upgrading, mode = true, sandbox.ModeReport
		}
	}
	settings.Mode = mode
	if mode.Enforced() {
		dir, err := os.MkdirTemp("", "switchboard-"+name+"-")
		if err != nil {
			return nil, err
		}
		c.tempDir, l.TempDir = dir, dir
	}
	res, err := sandbox.Resolve(settings, l)
	if err != nil {
		c.release()
		return nil, err
	}
	c.policy = res.Policy
	c.status = sandbox.Plan(&c.policy, sup)
	if mode.Enforced() && runtime.GOOS == "linux" && !useShim() {
		// Nothing applies it without the shim.
		if err := c.unconfined(spec.Server); err != nil {
			c.release()
			return nil, err
		}
		return c, nil
	}
	switch {
	case mode == sandbox.ModeReport:
		c.status.Report = sandbox.Audit(c.policy, l)
		c.status.Upgrade = upgrading
		if upgrading && len(c.status.Report) == 0 {
			// Nothing would be denied: enforce from the next start.
			os.MkdirAll(l.PrivateDir, 0o700)
		}
		return c, nil
	case !mode.Enforced():
		return c, nil
	}
	if m, ok := c.status.Refusal(); ok && mode == sandbox.ModeRequired {
		c.release()
		return nil, &SandboxError{Server: spec.Server, Missing: m}
	}
	if l.PrivateDir != "" {
		res.Dirs = append(res.Dirs, l.PrivateDir)
	}
	for _, d := range res.Dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			c.release()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	c.env = map[string]string{}
	for k, v := range res.Env {
		if _, set := spec.Env[k]; !set {
			c.env[k] = v
		}
	}
	c.netns = c.policy.Network.Off && sup.NetNS
	if sup.Cgroup != "" {
		var b [4]byte
		rand.Read(b[:])
		cg, err := sandbox.NewCgroup("switchboard-"+name+"-"+hex.EncodeToString(b[:]), c.policy, sup)
		if err != nil {
			spec.Logger.Warn("cannot make the server's cgroup; its memory, processes and CPU are not limited",
				"server", spec.Server, "err", err)
			sup.Cgroup = ""
			c.status = sandbox.Plan(&c.policy, sup)
			if m, ok := c.status.Refusal(); ok && mode == sandbox.ModeRequired {
				c.release()
				return nil, &SandboxError{Server: spec.Server, Missing: m}
			}
		} else {
			c.cgroup = cg
			c.policy.Cgroups = cg.Dirs()
		}
	}
	return c, nil
}

// enforced reports whether the shim applies c's policy.
func (c *confinement) enforced() bool { return c != nil && c.policy.Mode.Enforced() }

// release removes what confine made: the cgroup (once empty) and the
// temporary directory. It returns what the cgroup's limits did.
func (c *confinement) release() sandbox.Events {
	if c == nil {
		return sandbox.Events{}
	}
	var ev sandbox.Events
	if c.cgroup != nil {
		ev = c.cgroup.Events()
		c.cgroup.Remove()
	}
	if c.tempDir != "" {
		os.RemoveAll(c.tempDir)
	}
	return ev
}

// unconfined records that the server starts without its shim, so without
// its sandbox: every protection is missing. A "required" sandbox refuses.
func (c *confinement) unconfined(server string) error {
	mode := c.policy.Mode
	c.status = sandbox.Plan(&c.policy, sandbox.Support{OS: runtime.GOOS})
	if runtime.GOOS == "linux" {
		for i := range c.status.Missing {
			c.status.Missing[i].Code = "no_shim"
			c.status.Missing[i].Detail = "not applied: the server started without the launcher's shim"
		}
		c.status.InForce = nil
	}
	c.policy.Mode = sandbox.ModeOff
	if m, ok := c.status.Refusal(); ok && mode == sandbox.ModeRequired {
		return &SandboxError{Server: server, Missing: m}
	}
	return nil
}

// missing records that the shim could not apply protection, and why.
func (c *confinement) missing(protection, why string) {
	if c == nil {
		return
	}
	var in []string
	for _, p := range c.status.InForce {
		if p != protection {
			in = append(in, p)
		}
	}
	c.status.InForce = in
	c.status.Missing = append(c.status.Missing, sandbox.Missing{Protection: protection, Code: "shim_refused",
		Detail: "not applied: " + why, Asked: true})
}
