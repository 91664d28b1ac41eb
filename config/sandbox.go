package config

import (
	"fmt"
	"math"
	"strconv"
)

// Sandbox modes ("sandbox", or its "mode"), from the weakest.
const (
	SandboxOff      = "off"      // unconfined; only a trusted server may say so
	SandboxReport   = "report"   // unconfined, reporting what would be denied
	SandboxOn       = "on"       // the default: every protection this system offers
	SandboxRequired = "required" // on, and the server does not start when one is missing
)

var sandboxModes = []string{SandboxOff, SandboxReport, SandboxOn, SandboxRequired}

// Sandbox is a stdio server's sandbox ("sandbox": a mode, or an object
// with "mode", "read", "write", "network", "memoryMb", "processes",
// "cpu"). The zero value of each field selects the default; the
// launcher's sandbox package resolves it (see docs/SANDBOX.md).
type Sandbox struct {
	// Mode as written; "" means the default ([Server.SandboxMode]).
	Mode string
	// Read and Write are paths granted beside the defaults, read-only or
	// read and write; "~" is the user's home.
	Read, Write []string
	// Network is nil for the preset's choice, else what was written.
	Network *SandboxNetwork
	// MemoryMB, Processes and CPU (cores, as a rate) cap the server; 0
	// means the default.
	MemoryMB, Processes int
	CPU                 float64
	// Set reports whether the configuration had "sandbox".
	Set bool
}

// SandboxNetwork is "network": "on", "off", or a list of TCP ports.
type SandboxNetwork struct {
	Off   bool
	Ports []uint16
}

func (n *SandboxNetwork) json() any {
	switch {
	case n == nil:
		return nil
	case n.Off:
		return "off"
	case len(n.Ports) > 0:
		return n.Ports
	default:
		return "on"
	}
}

// json is the canonical form of s for MarshalJSON: the mode alone when
// nothing else is set.
func (s Sandbox) json() any {
	if !s.Set {
		return nil
	}
	if s.Read == nil && s.Write == nil && s.Network == nil && s.MemoryMB == 0 && s.Processes == 0 && s.CPU == 0 {
		return s.Mode
	}
	m := map[string]any{"mode": s.Mode}
	if s.Read != nil {
		m["read"] = s.Read
	}
	if s.Write != nil {
		m["write"] = s.Write
	}
	if n := s.Network.json(); n != nil {
		m["network"] = n
	}
	if s.MemoryMB != 0 {
		m["memoryMb"] = s.MemoryMB
	}
	if s.Processes != 0 {
		m["processes"] = s.Processes
	}
	if s.CPU != 0 {
		m["cpu"] = s.CPU
	}
	return m
}

var sandboxFields = []string{"mode", "read", "write", "network", "memoryMb", "processes", "cpu"}

// decodeSandbox reads "sandbox".
func (d *decoder) decodeSandbox(n *node, p *jsonPath, server string) (Sandbox, bool) {
	s := Sandbox{Set: true}
	mode := func(n *node, p *jsonPath) bool {
		v, ok := d.str(n, p, server)
		if !ok {
			return false
		}
		for _, m := range sandboxModes {
			if v == m {
				s.Mode = v
				return true
			}
		}
		d.add(p, server, fmt.Sprintf(`unknown sandbox mode %s: want "off", "report", "on" or "required"`, quote(v)), nil)
		return false
	}
	if n.kind == kindString {
		return s, mode(n, p)
	}
	if n.kind != kindObject {
		d.wrongType(n, p, server, `"off", "report", "on", "required" or an object`)
		return s, false
	}
	ok := true
	count := func(n *node, p *jsonPath, max int) int {
		v, err := strconv.Atoi(n.str)
		if n.kind != kindNumber || err != nil || v < 1 || v > max {
			d.add(p, server, fmt.Sprintf("want an integer from 1 to %d", max), nil)
			ok = false
		}
		return v
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "mode":
			ok = mode(m.val, fp) && ok
		case "read", "write":
			v, good := d.strs(m.val, fp, server)
			ok = ok && good
			for i, path := range v {
				if path == "" {
					d.add(fp.i(i), server, "empty path", nil)
					ok = false
				}
			}
			if m.key == "read" {
				s.Read = v
			} else {
				s.Write = v
			}
		case "network":
			s.Network = &SandboxNetwork{}
			switch {
			case m.val.kind == kindString && (m.val.str == "on" || m.val.str == "off"):
				s.Network.Off = m.val.str == "off"
			case m.val.kind == kindArray:
				for i, e := range m.val.elems {
					s.Network.Ports = append(s.Network.Ports, uint16(count(e, fp.i(i), math.MaxUint16)))
				}
				if len(m.val.elems) == 0 {
					d.add(fp, server, `an empty list of ports: say "off"`, nil)
					ok = false
				}
			default:
				d.add(fp, server, `want "on", "off" or a list of TCP ports`, nil)
				ok = false
			}
		case "memoryMb":
			s.MemoryMB = count(m.val, fp, 1<<20)
		case "processes":
			s.Processes = count(m.val, fp, 1<<16)
		case "cpu":
			v, err := strconv.ParseFloat(m.val.str, 64)
			if m.val.kind != kindNumber || err != nil || v <= 0 || v > 1024 {
				d.add(fp, server, "want a number of cores above 0 (0.5 is half of one)", nil)
				ok = false
			}
			s.CPU = v
		default:
			d.unknown(fp, m.key, sandboxFields, nil, server)
			ok = false
		}
	}
	return s, ok
}

// resolveSandbox applies the trust level to the sandbox's mode: "on" by
// default; a trusted server may turn it off; a sandboxed one runs with
// "required" at least.
func (d *decoder) resolveSandbox(s *Server, sb Sandbox, p *jsonPath) {
	if s.Transport != TransportStdio {
		if sb.Set {
			d.add(p.k("sandbox"), s.Name, `"sandbox" applies to stdio servers only`, nil)
		}
		return
	}
	s.Sandbox = sb
	switch mode := s.SandboxMode(); {
	case mode == SandboxOff && s.Trust != TrustTrusted:
		d.add(p.k("sandbox"), s.Name, `only a server with "trust": "trusted" may run without its sandbox`, nil)
	case s.Trust == TrustSandboxed && mode != SandboxRequired:
		d.add(p.k("sandbox"), s.Name, `a server with "trust": "sandboxed" runs with "sandbox": "required"`, nil)
	}
}

// SandboxMode is the mode s's sandbox runs in: as configured, else
// SandboxRequired for a server whose trust is "sandboxed" and SandboxOn
// for the others; "" for a server that is not stdio.
func (s *Server) SandboxMode() string {
	switch {
	case s.Transport != TransportStdio:
		return ""
	case s.Sandbox.Mode != "":
		return s.Sandbox.Mode
	case s.Trust == TrustSandboxed:
		return SandboxRequired
	}
	return SandboxOn
}
