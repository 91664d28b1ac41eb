package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// SandboxStatus says how a stdio server is confined (see docs/SANDBOX.md):
// its mode, the protections in force and those missing here, and, for its
// last start, what report mode would deny and what the limits did.
type SandboxStatus struct {
	// Mode is "off", "report", "on" or "required".
	Mode string `json:"mode"`
	// Summary is one line for a person: "on: files, syscalls, ...;
	// missing private-addresses", "not sandboxed (no mechanism on
	// darwin)".
	Summary string `json:"summary"`
	// Started: InForce, Missing, Network and Report are those of the
	// server's last start in this process; before one, they are empty.
	Started bool             `json:"started"`
	InForce []string         `json:"inForce,omitempty"`
	Missing []SandboxMissing `json:"missing,omitempty"`
	Network string           `json:"network,omitempty"`
	// Report lists what the sandbox would deny, in report mode.
	Report []string `json:"report,omitempty"`
	// Upgrade: the server ran before it had a sandbox and its first start
	// since ran in report mode.
	Upgrade bool `json:"upgrade,omitempty"`
	// OOMKills and ForksRefused count what the memory and process limits
	// did to the server's last process.
	OOMKills     int `json:"oomKills,omitempty"`
	ForksRefused int `json:"forksRefused,omitempty"`
}

// SandboxMissing is a protection missing here, with a stable reason code
// ("no_cgroup", "network_on", ...). Asked: the server's policy asks for
// it, so that a "required" sandbox refuses to start without it.
type SandboxMissing struct {
	Protection string `json:"protection"`
	Code       string `json:"code"`
	Detail     string `json:"detail"`
	Asked      bool   `json:"asked"`
}

// The kinds of ServerEvent for the sandbox.
const (
	// EventSandbox: a stdio server was started, or refused, under its
	// sandbox; Sandbox and Outcome say how.
	EventSandbox EventKind = "sandbox"
	// EventSandboxLimit: the sandbox's memory limit killed a process of
	// the server, or its process limit refused one.
	EventSandboxLimit EventKind = "sandbox_limit"
)

// Sandbox outcomes of EventSandbox.
const (
	SandboxEnforced = "enforced" // every protection the policy asks for is in force
	SandboxPartial  = "partial"  // in force, with protections missing here
	SandboxReported = "report"   // report mode: unconfined
	SandboxOff      = "off"      // unconfined
	SandboxRefused  = "refused"  // required, and a protection is missing: not started
)

// sandboxStarted records the sandbox of a dial: the status of the started
// process, or the refusal of a required sandbox.
func (s *server) sandboxStarted(sc *config.Server, conn *upstream.Conn, err error) {
	mode := sc.SandboxMode()
	if mode == "" {
		return
	}
	var st sandbox.Status
	var req *sandbox.RequiredError
	outcome := ""
	switch {
	case errors.As(err, &req):
		st = sandbox.Status{Mode: sandbox.ModeRequired, OS: runtime.GOOS, Missing: []sandbox.Missing{req.Missing}}
		outcome = SandboxRefused
	case err != nil || conn == nil:
		return
	default:
		st = conn.Sandbox()
		switch {
		case st.Mode == "":
			return
		case st.Mode == sandbox.ModeOff:
			outcome = SandboxOff
		case st.Mode == sandbox.ModeReport:
			outcome = SandboxReported
		default:
			outcome = SandboxEnforced
			if _, ok := st.Refusal(); ok {
				outcome = SandboxPartial
			}
		}
	}
	s.life.setSandbox(st)
	for _, r := range st.Report {
		s.h.log.Info("the server's sandbox would deny this; grant it in \"sandbox\" to enforce it", "server", s.name, "what", r)
	}
	s.h.event(ServerEvent{Server: s.name, Kind: EventSandbox, Sandbox: string(st.Mode), Outcome: outcome})
}

// sandboxEnded records what the limits did to a server's process.
func (s *server) sandboxEnded(conn *upstream.Conn) {
	ev := conn.SandboxEvents()
	if ev.OOMKills == 0 && ev.PidsRefused == 0 {
		return
	}
	mode := s.life.setLimits(ev)
	s.h.log.Warn("the server reached its sandbox's limits", "server", s.name, "oomKills", ev.OOMKills, "forksRefused", ev.PidsRefused)
	s.h.event(ServerEvent{Server: s.name, Kind: EventSandboxLimit, Sandbox: string(mode)})
}

// sandboxStatus is what Servers reports of a server's sandbox; nil for a
// server that is not stdio.
func sandboxStatus(sc *config.Server, v *serverView) *SandboxStatus {
	mode := sc.SandboxMode()
	if mode == "" {
		return nil
	}
	out := &SandboxStatus{Mode: mode}
	if !v.sandboxSet {
		out.Summary = mode + " (applied at its next start)"
		if runtime.GOOS != "linux" && mode != config.SandboxOff {
			out.Summary = "not sandboxed (no mechanism on " + runtime.GOOS + ")"
		}
		return out
	}
	st := v.sandbox
	out.Mode, out.Started, out.Summary = string(st.Mode), true, st.Summary()
	out.InForce, out.Network, out.Report, out.Upgrade = st.InForce, st.Network, st.Report, st.Upgrade
	for _, m := range st.Missing {
		out.Missing = append(out.Missing, SandboxMissing(m))
	}
	out.OOMKills, out.ForksRefused = v.limits.OOMKills, v.limits.PidsRefused
	if out.OOMKills > 0 || out.ForksRefused > 0 {
		out.Summary += fmt.Sprintf("; limits reached: %d killed at the memory limit, %d forks refused", out.OOMKills, out.ForksRefused)
	}
	return out
}

// sandboxFindings are what a server's sandbox says to an operator: what
// report mode would deny, the protections missing that its policy asks
// for, and the limits it reached.
func sandboxFindings(name string, st *SandboxStatus) []Finding {
	if st == nil || !st.Started {
		return nil
	}
	var out []Finding
	for _, r := range st.Report {
		out = append(out, ingest.NewFinding(name, "sandbox_would_deny", "",
			fmt.Sprintf("report mode: the sandbox would deny %s; grant it in \"sandbox\" to enforce it", r)))
	}
	for _, m := range st.Missing {
		if m.Asked {
			out = append(out, ingest.NewFinding(name, "sandbox_missing", "", fmt.Sprintf("%s: %s (%s)", m.Protection, m.Detail, m.Code)))
		}
	}
	if st.OOMKills > 0 {
		out = append(out, ingest.NewFinding(name, "sandbox_limit", "", fmt.Sprintf("%d process(es) killed at the sandbox's memory limit", st.OOMKills)))
	}
	if st.ForksRefused > 0 {
		out = append(out, ingest.NewFinding(name, "sandbox_limit", "", fmt.Sprintf("%d fork(s) refused at the sandbox's process limit", st.ForksRefused)))
	}
	return out
}

// sandboxCacheDir is where each sandboxed server's private directory is:
// $XDG_CACHE_HOME/switchboard/servers, else ~/.cache/switchboard/servers;
// "" when neither is known.
func sandboxCacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "switchboard", "servers")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".cache", "switchboard", "servers")
	}
	return ""
}

// underHome reports whether dir is within home (a cache must never be).
func underHome(dir, home string) bool {
	rel, err := filepath.Rel(home, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// ranBefore reports whether a server has a catalogue, discovered or saved
// in the store under any configuration: it ran before, perhaps before it
// had a sandbox (see upstream.Options.RanBefore).
func (h *Host) ranBefore(name string) bool {
	if comp := h.comp.Load(); comp != nil {
		if s := comp.servers[name]; s != nil {
			if s.cat.rawLists() != nil {
				return true
			}
		}
	}
	if h.store == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditPutTimeout)
	defer cancel()
	c, err := h.store.Catalog(ctx, name)
	return err == nil && c != nil
}
