package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A Mode says how a server's sandbox is enforced.
type Mode string

// The modes, from the weakest.
const (
	// ModeOff runs the server unconfined and says so.
	ModeOff Mode = "off"
	// ModeReport runs the server unconfined and reports what the policy
	// would deny that can be seen before it starts (arguments, working
	// directory and environment values naming paths outside the grants).
	ModeReport Mode = "report"
	// ModeOn, the default, applies every protection this system offers and
	// reports the ones it lacks.
	ModeOn Mode = "on"
	// ModeRequired is ModeOn, except that the server does not start when a
	// protection its policy asks for is missing.
	ModeRequired Mode = "required"
)

// Modes lists the modes, from the weakest.
var Modes = []Mode{ModeOff, ModeReport, ModeOn, ModeRequired}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return slices.Contains(Modes, m) }

// Enforced reports whether m confines the server.
func (m Mode) Enforced() bool { return m == ModeOn || m == ModeRequired }

// Network says what a server may reach. The zero value is "on": every
// address and port.
type Network struct {
	// Off gives the server a network namespace of its own with nothing in
	// it (not even a loopback interface that is up).
	Off bool `json:"off,omitempty"`
	// Ports, when not empty (and Off is false), are the only TCP ports the
	// server may connect to; it may bind none. Landlock filters ports, not
	// addresses: loopback and private addresses stay reachable on them.
	Ports []uint16 `json:"ports,omitempty"`
}

func (n Network) String() string {
	switch {
	case n.Off:
		return "off"
	case len(n.Ports) > 0:
		s := make([]string, len(n.Ports))
		for i, p := range n.Ports {
			s[i] = fmt.Sprint(p)
		}
		return "TCP ports " + strings.Join(s, ", ")
	default:
		return "on"
	}
}

// Settings are what a configuration says of a server's sandbox; the zero
// value of each field selects its default.
type Settings struct {
	// Mode; "" means ModeOn.
	Mode Mode
	// Read and Write are paths granted beside the defaults (see
	// [Resolve]): Read read-only (and executable), Write read and write.
	// A leading "~" is the user's home.
	Read, Write []string
	// Network; nil means the preset's (off for servers that need none once
	// installed, else on).
	Network *Network
	// MemoryMB caps the memory of the server's processes together, in
	// MiB; 0 means DefaultMemoryMB.
	MemoryMB int
	// Processes caps the server's processes and threads together; 0 means
	// DefaultProcesses.
	Processes int
	// CPU caps the server's CPU time as a rate, in cores (0.5 is half of
	// one core); 0 means DefaultCPU.
	CPU float64
	// Explicit: the configuration wrote Mode (an upgrade's first start
	// does not turn an explicit "on" into report mode).
	Explicit bool
}

// Defaults of Settings.
const (
	DefaultMemoryMB  = 2048
	DefaultProcesses = 512
	DefaultCPU       = 1.0
)

// A Policy is what a server's shim applies: resolved absolute paths and
// limits. It crosses from the launcher to the shim as an argument
// ([Policy.Encode], [Decode]).
type Policy struct {
	Mode Mode `json:"mode"`
	// Read paths may be read, Exec paths read and executed, Write paths
	// read, written and executed; nothing else may be opened. A path may
	// be a file or a directory (and then everything under it).
	Read  []string `json:"read,omitempty"`
	Exec  []string `json:"exec,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network the server may reach.
	Network Network `json:"network"`
	// Limits; 0 means none.
	MemoryBytes int64   `json:"memoryBytes,omitempty"`
	Processes   int     `json:"processes,omitempty"`
	CPU         float64 `json:"cpu,omitempty"`
	// Cgroups are the directories of the server's cgroups (one per v1
	// hierarchy, or one v2 cgroup): the shim moves itself into each
	// before it starts the server, which inherits them.
	Cgroups []string `json:"cgroups,omitempty"`
	// NprocLimit, when positive, is set as RLIMIT_NPROC in the shim: where
	// there is no cgroup and the server has a user namespace of its own,
	// the kernel counts its processes there, so the limit is the
	// server's alone.
	NprocLimit int `json:"nproc,omitempty"`
}

// Encode returns p as one argument.
func (p Policy) Encode() string {
	b, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode reads an argument made by [Policy.Encode].
func Decode(s string) (Policy, error) {
	var p Policy
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return Policy{}, fmt.Errorf("sandbox policy: %w", err)
	}
	return p, nil
}
