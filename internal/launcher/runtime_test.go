//go:build linux

package launcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRuntime writes an executable shell script named name into dir that
// prints version for --version and otherwise runs this test binary (a
// real child in the mode the Spec's env says).
func fakeRuntime(t *testing.T, dir, name, version string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '" + version + "'; exit 0; fi\nexec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		fakes   map[string]string // program -> version it prints
		runtime map[string]string
		wantErr error // nil: the server starts
		want    []string
	}{
		{name: "npx without node", command: "npx", fakes: map[string]string{"npx": "10.0.0"},
			wantErr: ErrRuntimeMissing, want: []string{`server "rt": Node.js is not installed: "node" not found in PATH (`, "install Node.js from https://nodejs.org"}},
		{name: "uvx missing", command: "uvx",
			wantErr: ErrRuntimeMissing, want: []string{`"uvx" not found in PATH`, "install uv see https://docs.astral.sh/uv/"}},
		{name: "docker missing", command: "docker", runtime: map[string]string{"docker": ">=20"},
			wantErr: ErrRuntimeMissing, want: []string{"install Docker (docker >=20)", "start the daemon"}},
		{name: "node too old", command: "node", fakes: map[string]string{"node": "v18.19.0"}, runtime: map[string]string{"node": ">=20"},
			wantErr: ErrRuntimeTooOld, want: []string{`server "rt": needs node >=20, found 18.19.0 (`, "install Node.js (node >=20) from https://nodejs.org"}},
		{name: "npx with old node", command: "npx", fakes: map[string]string{"npx": "10.0.0", "node": "v16.0.0"}, runtime: map[string]string{"node": ">=20"},
			wantErr: ErrRuntimeTooOld, want: []string{"needs node >=20, found 16.0.0"}},
		{name: "python caret", command: "python3", fakes: map[string]string{"python3": "Python 3.10.4"}, runtime: map[string]string{"python": "^3.11"},
			wantErr: ErrRuntimeTooOld, want: []string{"needs python ^3.11, found 3.10.4", "install Python (python ^3.11)"}},
		{name: "version unreadable", command: "deno", fakes: map[string]string{"deno": "no digits here"}, runtime: map[string]string{"deno": ">=1"},
			wantErr: ErrRuntimeTooOld, want: []string{"the version of", "printed no version"}},
		{name: "unknown runtime", command: "node", fakes: map[string]string{"node": "v22.3.0"}, runtime: map[string]string{"nodejs": ">=20"},
			wantErr: ErrRuntimeTooOld, want: []string{`server "rt": unknown runtime "nodejs": want one of bun, deno, docker, node, python, uv`}},
		{name: "node new enough", command: "node", fakes: map[string]string{"node": "v22.3.0"}, runtime: map[string]string{"node": ">=20"}},
		{name: "npx with node, no requirement", command: "npx", fakes: map[string]string{"npx": "10.0.0", "node": "v12.0.0"}},
		{name: "uvx alone", command: "uvx", fakes: map[string]string{"uvx": "uv-uvx 0.5.1"}, runtime: map[string]string{"uv": ">=0.4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for prog, v := range tt.fakes {
				fakeRuntime(t, dir, prog, v)
			}
			spec := childSpec(t, "mcp")
			spec.Server = "rt"
			spec.Command = tt.command
			spec.Runtime = tt.runtime
			spec.Env["PATH"] = dir
			if tt.wantErr == nil {
				p := start(t, spec)
				if p.PID() <= 0 {
					t.Fatalf("PID %d", p.PID())
				}
				return
			}
			p, err := Start(spec)
			if err == nil {
				p.Stop()
				t.Fatalf("Start succeeded, want %v", tt.wantErr)
			}
			var re *RuntimeError
			if !errors.Is(err, tt.wantErr) || !errors.As(err, &re) || re.Server != "rt" {
				t.Fatalf("Start: %v, want a *RuntimeError for %v", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if errors.Is(tt.wantErr, ErrRuntimeMissing) != errors.Is(err, ErrProgramNotFound) {
				t.Errorf("errors.Is(%v, ErrProgramNotFound) = %t", err, errors.Is(err, ErrProgramNotFound))
			}
		})
	}
}

// TestRuntimeRealNode checks a requirement against the machine's node.
func TestRuntimeRealNode(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed; the runtime check is tested against a real one")
	}
	spec := childSpec(t, "mcp")
	spec.Runtime = map[string]string{"node": ">=1"}
	start(t, spec)

	spec = childSpec(t, "mcp")
	spec.Runtime = map[string]string{"node": ">=1000"}
	_, err := Start(spec)
	if !errors.Is(err, ErrRuntimeTooOld) || !strings.Contains(err.Error(), "needs node >=1000, found ") {
		t.Fatalf("Start with node >=1000: %v", err)
	}
}

func TestCheckRequirement(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ rt, want, msg string }{
		{"node", ">=20", ""},
		{"python", "^3.11", ""},
		{"uv", "", ""},
		{"nodejs", ">=20", `unknown runtime "nodejs"`},
		{"node", "twenty", "invalid version requirement"},
	} {
		got := CheckRequirement(tt.rt, tt.want)
		if (tt.msg == "") != (got == "") || !strings.Contains(got, tt.msg) {
			t.Errorf("CheckRequirement(%q, %q) = %q, want %q", tt.rt, tt.want, got, tt.msg)
		}
	}
}
