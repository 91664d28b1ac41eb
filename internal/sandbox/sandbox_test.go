package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestResolveDefaults(t *testing.T) {
	home := t.TempDir()
	sb := filepath.Join(home, ".switchboard")
	script := filepath.Join(home, "proj", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, nil, 0o644)
	allowed := t.TempDir()
	l := Launch{Server: "fs", Program: "/usr/bin/node", Args: []string{script, allowed}, Dir: "/", Home: home,
		SwitchboardHome: sb, PrivateDir: filepath.Join(t.TempDir(), "fs"), TempDir: "/tmp/x"}
	r, err := Resolve(Settings{}, l)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Policy
	if p.Mode != ModeOn || p.MemoryBytes != DefaultMemoryMB<<20 || p.Processes != DefaultProcesses || p.CPU != DefaultCPU {
		t.Errorf("defaults: %+v", p)
	}
	if !slices.Contains(p.Exec, filepath.Join(home, "proj")) {
		t.Errorf("the package's project is not readable: %v", p.Exec)
	}
	if !slices.Contains(p.Write, allowed) || !slices.Contains(p.Write, "/tmp/x") {
		t.Errorf("the allowed directory or the temporary directory is not writable: %v", p.Write)
	}
	if !p.Network.Off {
		t.Errorf("the installed filesystem server has the network: %v", p.Network)
	}
	if r.Env["TMPDIR"] != "/tmp/x" || r.Env["npm_config_cache"] != filepath.Join(l.PrivateDir, "npm") {
		t.Errorf("env %v", r.Env)
	}
	if p.Allows(filepath.Join(sb, "creds.json")) || p.Allows(filepath.Join(home, ".ssh", "id_rsa")) {
		t.Errorf("the homes are open: %+v", p)
	}

	// npx fetches at first launch: the network stays on until the
	// package is in the server's private cache.
	l = Launch{Server: "fs", Program: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", allowed},
		Home: home, SwitchboardHome: sb, PrivateDir: filepath.Join(t.TempDir(), "fs")}
	if r, _ := Resolve(Settings{}, l); r.Policy.Network.Off {
		t.Error("npx -y before its first fetch has no network")
	}
	pkg := filepath.Join(l.PrivateDir, "npm", "_npx", "abc", "node_modules", "@modelcontextprotocol", "server-filesystem", "package.json")
	os.MkdirAll(filepath.Dir(pkg), 0o755)
	os.WriteFile(pkg, nil, 0o644)
	if r, _ := Resolve(Settings{}, l); !r.Policy.Network.Off {
		t.Error("npx with its package installed keeps the network")
	}
}

// TestResolveOwnHomeDir: a well-known server that keeps its settings in
// a directory of the user's home gets that directory, made before it
// starts, and nothing else of the home.
func TestResolveOwnHomeDir(t *testing.T) {
	home := t.TempDir()
	l := Launch{Server: "dc", Program: "/usr/bin/npx", Args: []string{"-y", "@wonderwhy-er/desktop-commander@0.2.52"},
		Home: home, SwitchboardHome: filepath.Join(home, ".switchboard"), PrivateDir: filepath.Join(t.TempDir(), "dc")}
	r, err := Resolve(Settings{}, l)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(home, ".claude-server-commander")
	if !slices.Contains(r.Policy.Write, own) || !slices.Contains(r.Dirs, own) {
		t.Errorf("its own directory: write %v, dirs %v", r.Policy.Write, r.Dirs)
	}
	if r.Policy.Allows(filepath.Join(home, ".ssh", "id_rsa")) {
		t.Error("the rest of the home is open")
	}
	// Another server does not get it.
	l.Args = []string{"-y", "@modelcontextprotocol/server-memory"}
	if r, _ := Resolve(Settings{}, l); slices.Contains(r.Policy.Write, own) {
		t.Error("another server may write desktop-commander's settings")
	}
}

func TestResolveRefusesSwitchboardHome(t *testing.T) {
	home := t.TempDir()
	l := Launch{Server: "s", Program: "/bin/true", Home: home, SwitchboardHome: filepath.Join(home, ".switchboard")}
	for _, s := range []Settings{{Read: []string{"~"}}, {Write: []string{"~/.switchboard/x"}}, {Read: []string{"/"}}} {
		if _, err := Resolve(s, l); !errors.Is(err, ErrSwitchboardHome) {
			t.Errorf("%+v: %v, want ErrSwitchboardHome", s, err)
		}
	}
	if _, err := Resolve(Settings{Read: []string{"~/data"}}, l); err != nil {
		t.Errorf("a grant beside Switchboard's home: %v", err)
	}
}

func TestPlan(t *testing.T) {
	full := Support{OS: "linux", Landlock: 7, Seccomp: true, UserNS: true, NetNS: true, Cgroup: "v1", Root: true}
	p := Policy{Mode: ModeRequired, Network: Network{Off: true}, MemoryBytes: 1, Processes: 1, CPU: 1}
	if st := Plan(&p, full); len(st.Missing) != 0 {
		t.Errorf("full support: missing %v", st.Missing)
	}
	// Network on: private addresses are reported, never asked for.
	p.Network = Network{}
	st := Plan(&p, full)
	if _, refused := st.Refusal(); refused || len(st.Missing) != 1 || st.Missing[0].Code != CodeNetworkOn {
		t.Errorf("network on: %+v", st)
	}
	// No cgroup, root: limits missing and asked; unprivileged with a user
	// namespace: the process limit by RLIMIT_NPROC.
	none := full
	none.Cgroup = ""
	if m, refused := Plan(&p, none).Refusal(); !refused || m.Code != CodeNoCgroup {
		t.Errorf("no cgroup: %v %v", m, refused)
	}
	none.Root = false
	st = Plan(&p, none)
	if !slices.Contains(st.InForce, Processes) || p.NprocLimit != 1 {
		t.Errorf("unprivileged: %+v, nproc %d", st, p.NprocLimit)
	}
	// Another OS: nothing.
	st = Plan(&p, Support{OS: "darwin"})
	if st.Summary() != "not sandboxed (no mechanism on darwin)" {
		t.Errorf("darwin: %q", st.Summary())
	}
}

func TestAudit(t *testing.T) {
	dir := t.TempDir()
	p := Policy{Exec: []string{"/usr"}}
	got := Audit(p, Launch{Program: "/usr/bin/env", Args: []string{"--data=" + dir}, Env: map[string]string{"X": "/usr/bin"}})
	if len(got) != 1 || got[0] != "argument "+dir {
		t.Errorf("Audit = %q", got)
	}
}

func TestEncodeDecode(t *testing.T) {
	p := Policy{Mode: ModeOn, Read: []string{"/a"}, Network: Network{Ports: []uint16{443}}, MemoryBytes: 5}
	q, err := Decode(p.Encode())
	if err != nil || q.Mode != p.Mode || q.Network.Ports[0] != 443 || q.MemoryBytes != 5 {
		t.Errorf("%+v, %v", q, err)
	}
	if _, err := Decode("!"); err == nil {
		t.Error("Decode accepted garbage")
	}
}
