package lockfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample() *Lock {
	return &Lock{Servers: map[string]Server{
		"fs": {Launch: "sha256:l1", Package: &Package{Registry: "npm", Name: "pkg", Version: "1.0.15", Integrity: "sha512-a"},
			Tools: map[string]string{"read": "sha256:r", "write": "sha256:w"}, Prompts: map[string]string{"p": "sha256:p"},
			Templates: map[string]string{"t": "sha256:t"}},
		"gone": {Launch: "sha256:g"},
	}}
}

func TestSignAndRead(t *testing.T) {
	priv, pub, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	data, err := Sign(sample(), priv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(data, pub)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	want.Version = FormatVersion
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	if strings.Contains(string(priv), `"d"`) == false || strings.Contains(string(pub), `"d"`) {
		t.Errorf("the private key lacks, or the public key holds, the private part")
	}

	// Tampering: a changed hash, an added server, another key.
	for name, tampered := range map[string]string{
		"hash":   strings.Replace(string(data), "sha256:w", "sha256:x", 1),
		"server": strings.Replace(string(data), `"servers": {`, `"servers": {"evil": {"launch": "sha256:e"},`, 1),
	} {
		if _, err := Read([]byte(tampered), pub); !errors.Is(err, ErrSignature) {
			t.Errorf("%s tampered: %v, want ErrSignature", name, err)
		}
	}
	_, other, _ := NewKey()
	if _, err := Read(data, other); !errors.Is(err, ErrSignature) {
		t.Errorf("another key: %v, want ErrSignature", err)
	}
	if _, err := Read([]byte(strings.Replace(string(data), `"version"`, `"extra": 1, "version"`, 1)), pub); err == nil {
		t.Error("an unsigned field was accepted")
	}
	if _, err := Read(data, priv); err == nil {
		t.Error("a private key was taken as the public key")
	}
}

func TestCompare(t *testing.T) {
	want := sample()
	got := &Lock{Servers: map[string]Server{
		"fs": {Launch: "sha256:l2", Package: &Package{Registry: "npm", Name: "pkg", Version: "1.0.16", Integrity: "sha512-b"},
			Instructions: "sha256:i",
			Tools:        map[string]string{"read": "sha256:r2", "delete": "sha256:d"}, Prompts: map[string]string{"q": "sha256:q"},
			Templates: map[string]string{"t": "sha256:t2"}},
		"new": {Launch: "sha256:n"},
	}}
	var kinds []string
	for _, d := range Compare(want, got) {
		kinds = append(kinds, d.Kind+" "+d.Item)
	}
	wantKinds := []string{
		"package_changed ", "instructions_changed ", "tool_changed read", "tool_removed write", "tool_added delete",
		"prompt_removed p", "prompt_added q", "template_changed t", "server_missing ", "server_extra ",
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	d := Compare(want, got)[0]
	if s := d.String(); s != `server "fs": package changed (pkg@1.0.15 → pkg@1.0.16)` {
		t.Errorf("String = %q", s)
	}
	if s := Compare(want, got)[3].String(); s != `server "fs": tool "write" removed` {
		t.Errorf("String = %q", s)
	}
	got.Servers["fs"] = Server{Launch: "sha256:other", Package: want.Servers["fs"].Package, Tools: want.Servers["fs"].Tools,
		Prompts: want.Servers["fs"].Prompts, Templates: want.Servers["fs"].Templates}
	if d := Compare(want, got); len(d) == 0 || d[0].Kind != KindLaunchChanged {
		t.Errorf("a changed launch: %v", d)
	}
	if d := Compare(want, want); len(d) != 0 {
		t.Errorf("equal: %v", d)
	}
}
