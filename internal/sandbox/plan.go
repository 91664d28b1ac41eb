package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Protections, by their stable names.
const (
	NoNewPrivileges  = "no-new-privileges"
	Files            = "files"
	NetworkAccess    = "network"
	PrivateAddresses = "private-addresses"
	Syscalls         = "syscalls"
	OtherProcesses   = "other-processes"
	Memory           = "memory"
	Processes        = "processes"
	CPU              = "cpu"
)

// Reason codes of a missing protection: stable, for scripts and alerts.
const (
	CodeNoMechanism = "no_mechanism"     // this OS has none of the mechanisms
	CodeNoLandlock  = "no_landlock"      // the kernel has no Landlock
	CodeOldLandlock = "landlock_too_old" // its Landlock cannot filter TCP ports
	CodeNoSeccomp   = "no_seccomp"       // the kernel has no seccomp filters
	CodeNoNetNS     = "no_network_namespace"
	CodeNetworkOn   = "network_on" // the network is on: addresses are not filtered
	CodeNoCgroup    = "no_cgroup"  // no cgroup this user may create
)

// ErrRequired is wrapped by every *RequiredError.
var ErrRequired = errors.New("sandbox required")

// A RequiredError says why a server whose sandbox is "required" did not
// start: a protection its policy asks for is missing here.
type RequiredError struct {
	Server  string
	Missing Missing
}

func (e *RequiredError) Error() string {
	return fmt.Sprintf("server %q: sandbox required but %s is missing (%s): %s",
		e.Server, e.Missing.Protection, e.Missing.Code, e.Missing.Detail)
}

// Unwrap returns ErrRequired.
func (e *RequiredError) Unwrap() error { return ErrRequired }

// Support is what this kernel and user offer; see [Detect].
type Support struct {
	OS string
	// Landlock is the kernel's Landlock ABI version, 0 without Landlock.
	Landlock int
	Seccomp  bool
	// UserNS: this user may create user namespaces (root needs none).
	UserNS bool
	// NetNS: a server may get a network namespace of its own.
	NetNS bool
	// Cgroup is "v2" or "v1" when this user may create cgroups with the
	// memory, pids and cpu controllers, "" otherwise; CgroupParents are
	// the directories to create them in (one per v1 hierarchy).
	Cgroup        string
	CgroupParents map[string]string
	Root          bool
}

// A Missing protection.
type Missing struct {
	Protection string `json:"protection"`
	Code       string `json:"code"`
	Detail     string `json:"detail"`
	// Asked: the policy asks for it (a server in ModeRequired does not
	// start without it). Private addresses with the network on are
	// reported, never asked for.
	Asked bool `json:"asked"`
}

func (m Missing) String() string { return m.Protection + ": " + m.Detail }

// A Status says how one server runs: its mode, the protections in force
// and those missing.
type Status struct {
	Mode    Mode      `json:"mode"`
	OS      string    `json:"os,omitempty"`
	InForce []string  `json:"inForce"`
	Missing []Missing `json:"missing"`
	// Network as applied.
	Network string `json:"network,omitempty"`
	// Report lists, in ModeReport, what the sandbox would deny.
	Report []string `json:"report,omitempty"`
	// Upgrade: the server ran before it had a sandbox, and this first
	// start runs in report mode; it is enforced from the next start when
	// Report is empty.
	Upgrade bool `json:"upgrade,omitempty"`
}

// Summary is one line for a person.
func (s Status) Summary() string {
	switch {
	case s.Mode == "":
		return "not sandboxed"
	case s.OS != "" && s.OS != "linux":
		return "not sandboxed (no mechanism on " + s.OS + ")"
	case s.Mode == ModeOff:
		return "off"
	case s.Mode == ModeReport:
		prefix := "report only"
		if s.Upgrade {
			prefix = "report only (first start since the upgrade)"
		}
		if len(s.Report) == 0 {
			if s.Upgrade {
				return prefix + ": nothing would be denied; enforced from the next start"
			}
			return prefix + ": nothing would be denied"
		}
		return fmt.Sprintf("%s: would deny %s; grant them in \"sandbox\" to enforce it", prefix, strings.Join(s.Report, "; "))
	}
	line := string(s.Mode) + ": " + strings.Join(s.InForce, ", ")
	if len(s.Missing) > 0 {
		var m []string
		for _, x := range s.Missing {
			m = append(m, x.Protection)
		}
		line += "; missing " + strings.Join(m, ", ")
	}
	return line
}

// Refusal returns the first missing protection the policy asks for.
func (s Status) Refusal() (Missing, bool) {
	for _, m := range s.Missing {
		if m.Asked {
			return m, true
		}
	}
	return Missing{}, false
}

// Plan decides, with no I/O, which of p's protections hold on a system
// offering s, and fills in how p is applied there (NprocLimit).
func Plan(p *Policy, s Support) Status {
	st := Status{Mode: p.Mode, OS: s.OS, Network: p.Network.String(), InForce: []string{}, Missing: []Missing{}}
	if !p.Mode.Enforced() {
		return st
	}
	miss := func(prot, code, detail string, asked bool) {
		st.Missing = append(st.Missing, Missing{prot, code, detail, asked})
	}
	if s.OS != "linux" {
		for _, prot := range []string{Files, NetworkAccess, Syscalls, OtherProcesses, Memory, Processes, CPU} {
			miss(prot, CodeNoMechanism, "not sandboxed (no mechanism on "+s.OS+")", true)
		}
		return st
	}
	on := func(prot string) { st.InForce = append(st.InForce, prot) }
	on(NoNewPrivileges)
	if s.Landlock > 0 {
		on(Files)
		on(OtherProcesses)
	} else {
		miss(Files, CodeNoLandlock, "every file the user can open is open (needs Landlock)", true)
		miss(OtherProcesses, CodeNoLandlock, "other processes of the user can be traced and their environment read (needs Landlock)", true)
	}
	if s.Seccomp {
		on(Syscalls)
	} else {
		miss(Syscalls, CodeNoSeccomp, "every system call is allowed (needs seccomp)", true)
	}
	switch {
	case p.Network.Off && s.NetNS:
		on(NetworkAccess)
		on(PrivateAddresses)
	case p.Network.Off:
		miss(NetworkAccess, CodeNoNetNS, "open (needs a private network namespace)", true)
		miss(PrivateAddresses, CodeNoNetNS, "loopback and private addresses: open (needs a private network namespace)", true)
	case len(p.Network.Ports) > 0 && s.Landlock >= 4:
		on(NetworkAccess)
		miss(PrivateAddresses, CodeNetworkOn, "loopback and private addresses: open on the allowed ports (Landlock filters ports, not addresses)", false)
	case len(p.Network.Ports) > 0:
		miss(NetworkAccess, CodeOldLandlock, "every port is open (needs Landlock ABI 4)", true)
		miss(PrivateAddresses, CodeNetworkOn, "loopback and private addresses: open (needs a private network namespace)", false)
	default:
		miss(PrivateAddresses, CodeNetworkOn, "loopback and private addresses: open (the network is on; closing them needs a private network namespace)", false)
	}
	p.NprocLimit = 0
	limit := func(prot string, want bool) {
		switch {
		case !want:
		case s.Cgroup != "":
			on(prot)
		case prot == Processes && !s.Root && s.UserNS:
			// RLIMIT_NPROC, counted in the server's own user namespace.
			p.NprocLimit = p.Processes
			on(prot)
		default:
			miss(prot, CodeNoCgroup, "unlimited (needs a cgroup this user may create)", true)
		}
	}
	limit(Memory, p.MemoryBytes > 0)
	limit(Processes, p.Processes > 0)
	limit(CPU, p.CPU > 0)
	return st
}

// Audit lists what p would deny that can be seen before the server starts:
// the program, arguments, working directory and environment values that
// name existing paths outside p's grants.
func Audit(p Policy, l Launch) []string {
	var out []string
	seen := map[string]bool{}
	check := func(what, path string) {
		if !filepath.IsAbs(path) || seen[path] {
			return
		}
		if _, err := os.Stat(path); err != nil {
			return
		}
		seen[path] = true
		if !p.Allows(path) {
			out = append(out, fmt.Sprintf("%s %s", what, path))
		}
	}
	check("program", l.Program)
	for _, a := range l.Args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		check("argument", a)
	}
	if l.Dir != "" {
		check("working directory", l.Dir)
	}
	for k, v := range l.Env {
		for _, part := range filepath.SplitList(v) {
			check("env "+k, part)
		}
	}
	return out
}

// Allows reports whether p grants at least read access to path.
func (p Policy) Allows(path string) bool {
	for _, list := range [][]string{p.Read, p.Exec, p.Write} {
		for _, g := range list {
			if within(path, g) {
				return true
			}
		}
	}
	return false
}
