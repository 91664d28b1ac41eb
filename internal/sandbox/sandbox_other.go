//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// DeniedSyscalls is empty: there is no seccomp off Linux.
var DeniedSyscalls []string

// Apply does nothing off Linux: there is no mechanism to apply.
func Apply(Policy) error { return nil }

// Detect reports that nothing is offered off Linux.
func Detect() Support { return Support{OS: runtime.GOOS} }

// A Cgroup is never made off Linux.
type Cgroup struct{}

// Events says what the limits did.
type Events struct {
	OOMKills    int
	PidsRefused int
}

// NewCgroup fails off Linux.
func NewCgroup(string, Policy, Support) (*Cgroup, error) {
	return nil, errors.New("no cgroups on " + runtime.GOOS)
}

func (*Cgroup) Dirs() []string { return nil }
func (*Cgroup) Events() Events { return Events{} }
func (*Cgroup) Remove() error  { return nil }
