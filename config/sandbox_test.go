package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSandboxSettings(t *testing.T) {
	c := mustParse(t, `{"mcpServers":{
		"a":{"command":"x"},
		"b":{"command":"x","sandbox":"report"},
		"c":{"command":"x","trust":"trusted","sandbox":"off"},
		"d":{"command":"x","trust":"sandboxed","enabledTools":["t"]},
		"e":{"command":"x","sandbox":{"mode":"required","read":["~/data"],"write":["/srv/out"],"network":[443,8080],"memoryMb":512,"processes":64,"cpu":0.5}},
		"f":{"command":"x","sandbox":{"network":"off"}}
	}}`, nil)
	for name, want := range map[string]string{"a": "on", "b": "report", "c": "off", "d": "required", "e": "required", "f": "on"} {
		if got := c.Server(name).SandboxMode(); got != want {
			t.Errorf("%s: SandboxMode = %q, want %q", name, got, want)
		}
	}
	want := Sandbox{Mode: "required", Read: []string{"~/data"}, Write: []string{"/srv/out"},
		Network: &SandboxNetwork{Ports: []uint16{443, 8080}}, MemoryMB: 512, Processes: 64, CPU: 0.5, Set: true}
	if diff := cmp.Diff(want, c.Server("e").Sandbox); diff != "" {
		t.Errorf("e (-want +got):\n%s", diff)
	}
	if n := c.Server("f").Sandbox.Network; n == nil || !n.Off {
		t.Errorf("f: network %+v, want off", n)
	}
}

func TestSandboxErrors(t *testing.T) {
	for src, want := range map[string]string{
		`{"command":"x","sandbox":"maybe"}`:                                    `mcpServers.s.sandbox: unknown sandbox mode "maybe"`,
		`{"command":"x","sandbox":"off"}`:                                      `mcpServers.s.sandbox: only a server with "trust": "trusted"`,
		`{"command":"x","trust":"sandboxed","enabledTools":[],"sandbox":"on"}`: `runs with "sandbox": "required"`,
		`{"command":"x","sandbox":{"netwrk":"off"}}`:                           `mcpServers.s.sandbox.netwrk: unknown field`,
		`{"command":"x","sandbox":{"network":[]}}`:                             `mcpServers.s.sandbox.network: an empty list of ports`,
		`{"command":"x","sandbox":{"network":[70000]}}`:                        `mcpServers.s.sandbox.network[0]: want an integer from 1 to 65535`,
		`{"command":"x","sandbox":{"memoryMb":0}}`:                             `mcpServers.s.sandbox.memoryMb: want an integer`,
		`{"command":"x","sandbox":{"cpu":-1}}`:                                 `mcpServers.s.sandbox.cpu: want a number of cores`,
		`{"command":"x","sandbox":{"read":[""]}}`:                              `mcpServers.s.sandbox.read[0]: empty path`,
		`{"url":"https://example.com/mcp","sandbox":"on"}`:                     `"sandbox" applies to stdio servers only`,
	} {
		got := parseErr(t, `{"mcpServers":{"s":`+src+`}}`, nil)
		if !strings.Contains(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", src, got, want)
		}
	}
}
