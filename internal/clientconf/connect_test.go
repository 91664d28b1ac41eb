package clientconf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	gwStdio = Entry{Transport: Stdio, Command: "/usr/local/bin/switchboard", Args: []string{"serve", "--config", "/home/u/sb.json"}}
	gwHTTP  = Entry{Transport: HTTP, URL: "http://127.0.0.1:8765/mcp", Headers: map[string]string{"Authorization": "Bearer ${SWITCHBOARD_TOKEN}"}}
)

// gatewayFor is the entry each client is connected with: Claude Desktop's
// file holds stdio servers only.
func gatewayFor(client string) Entry {
	if client == "claude-desktop" {
		return gwStdio
	}
	return gwHTTP
}

// place copies a sample into a temp dir under its real name.
func place(t *testing.T, file, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, readSample(t, file), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConnectSamples connects the gateway to every sample, with and
// without Move, checks the result against its golden file and what Read
// makes of it, and disconnects back to the original bytes.
func TestConnectSamples(t *testing.T) {
	for _, s := range samples {
		for _, move := range []bool{false, true} {
			kind := "connect"
			if move {
				kind = "connect-move"
			}
			t.Run(kind+"/"+s.file, func(t *testing.T) {
				c := mustClient(t, s.client)
				path := place(t, s.file, s.name)
				orig := readBytes(t, path)
				before, err := Read(c, path)
				if err != nil {
					t.Fatal(err)
				}
				ch, err := Connect(c, path, gatewayFor(s.client), Options{Move: move})
				if err != nil {
					t.Fatal(err)
				}
				after := readBytes(t, path)
				if !bytes.Equal(after, ch.After) {
					t.Fatal("the file is not what Connect said it wrote")
				}
				golden(t, kind+"/"+s.file, after)
				if got := readBytes(t, ch.Backup); !bytes.Equal(got, orig) {
					t.Fatalf("backup differs from the original")
				}
				res, err := Read(c, path)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range res.Servers {
					if e.Project == "" {
						names = append(names, e.Name)
					}
				}
				want := []string{DefaultName}
				if !move {
					want = nil
					for _, e := range before.Servers {
						if e.Project == "" {
							want = append(want, e.Name)
						}
					}
					want = append(want, DefaultName)
				} else {
					for _, e := range before.Servers {
						if e.Project == "" && !slices.Contains(ch.Removed, e.Name) {
							t.Errorf("server %q neither kept nor reported removed", e.Name)
						}
					}
				}
				if diff := cmp.Diff(want, names); diff != "" {
					t.Errorf("servers after connect (-want +got):\n%s", diff)
				}
				gw := res.Servers[slices.IndexFunc(res.Servers, func(e Entry) bool { return e.Name == DefaultName })]
				wantGW := gatewayFor(s.client)
				if gw.Transport != wantGW.Transport || gw.URL != wantGW.URL || gw.Command != wantGW.Command {
					t.Errorf("gateway reads back as %+v", gw)
				}
				if wantGW.Transport == HTTP {
					tok := gw.Headers["Authorization"]
					if s.client == "codex" {
						tok = "Bearer ${" + gw.BearerTokenEnvVar + "}"
					}
					if tok != "Bearer ${SWITCHBOARD_TOKEN}" {
						t.Errorf("token reads back as %q", tok)
					}
				}

				dc, err := Disconnect(c, path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := readBytes(t, path); !bytes.Equal(got, orig) {
					t.Errorf("disconnect did not restore the original:\n%s", cmp.Diff(string(orig), string(got)))
				}
				if !cmp.Equal(dc.Restored, ch.Removed, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || slices.Equal(a, b) })) {
					t.Errorf("restored %v, removed %v", dc.Restored, ch.Removed)
				}
				if _, err := os.Stat(ch.Backup); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("backup left behind: %v", err)
				}
			})
		}
	}
}
