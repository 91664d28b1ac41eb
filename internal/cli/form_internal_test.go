package cli

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// TestFormEntryEdit: what an edit writes for the form's values, and the
// credentials it leaves unused: a blank secret keeps the stored value,
// "-" removes it, what the form does not show stays.
func TestFormEntryEdit(t *testing.T) {
	t.Parallel()
	const httpServer = `{"type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${cred:s.bearer.token}", "X-Key": "${cred:s.header.X-Key}"}, "timeoutMs": 5000, "trust": "trusted"}`
	const stdioServer = `{"command": "run", "args": ["--dir", "${HOME}/x"], "env": {"A": "${cred:s.env.A}", "B": "${cred:s.env.B}"}}`
	tests := []struct {
		name     string
		server   string
		edit     func(v *formValues)
		want     string
		wantDrop []string
		wantCred []string
	}{
		{"http, all blank", httpServer, func(*formValues) {}, httpServer, nil, nil},
		{"http, bearer removed, header renamed", httpServer, func(v *formValues) { v.bearer, v.hdrName = "-", "X-Other" },
			`{"type": "http", "url": "https://x.example/mcp", "headers": {"X-Other": "${cred:s.header.X-Key}"}, "timeoutMs": 5000, "trust": "trusted"}`,
			[]string{"s.bearer.token"}, nil},
		{"http, header removed, new bearer, untrusted", httpServer, func(v *formValues) { v.bearer, v.hdrValue, v.trust = "tok", "-", false },
			`{"type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${cred:s.bearer.token}"}, "timeoutMs": 5000}`,
			[]string{"s.header.X-Key"}, []string{"s.bearer.token"}},
		{"http to sse", httpServer, func(v *formValues) { v.transport = "sse" },
			`{"type": "sse", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${cred:s.bearer.token}", "X-Key": "${cred:s.header.X-Key}"}, "timeoutMs": 5000, "trust": "trusted"}`,
			nil, nil},
		{"stdio, blank keeps the command as written", stdioServer, func(*formValues) {}, stdioServer, nil, nil},
		{"stdio, one removed, one set, one added", stdioServer, func(v *formValues) { setEnv(v, "A", "-", "B", "new", "C", "c") },
			`{"command": "run", "args": ["--dir", "${HOME}/x"], "env": {"B": "new", "C": "c"}}`,
			[]string{"s.env.A", "s.env.B"}, nil},
		{"stdio, a secret set", stdioServer, func(v *formValues) { setEnv(v, "B_TOKEN", "new") },
			`{"command": "run", "args": ["--dir", "${HOME}/x"], "env": {"A": "${cred:s.env.A}", "B": "${cred:s.env.B}", "B_TOKEN": "${cred:B_TOKEN}"}}`,
			nil, []string{"B_TOKEN"}},
		{"stdio, all removed", stdioServer, func(v *formValues) { setEnv(v, "-", "") },
			`{"command": "run", "args": ["--dir", "${HOME}/x"]}`, []string{"s.env.A", "s.env.B"}, nil},
		{"stdio, a stored name with a blank value kept, a value with spaces", stdioServer, func(v *formValues) { setEnv(v, "A", "", "D", "a b") },
			`{"command": "run", "args": ["--dir", "${HOME}/x"], "env": {"A": "${cred:s.env.A}", "B": "${cred:s.env.B}", "D": "a b"}}`, nil, nil},
		{"stdio to http", stdioServer, func(v *formValues) { v.transport, v.url = "http", "http://127.0.0.1:9/mcp" },
			`{"url": "http://127.0.0.1:9/mcp"}`, []string{"s.env.A", "s.env.B"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := confedit.ParseObject([]byte(tt.server))
			if err != nil {
				t.Fatal(err)
			}
			cur := &current{name: "s", obj: obj, otherRef: map[string]bool{}}
			v := cur.prefill()
			tt.edit(v)
			e, apply, drop, err := v.entry("config.json", cur)
			if err != nil {
				t.Fatal(err)
			}
			doc := &confedit.Object{}
			servers := &confedit.Object{}
			servers.SetValue("s", obj)
			doc.SetValue("mcpServers", servers)
			if err := apply(doc); err != nil {
				t.Fatal(err)
			}
			got, _ := e.obj.MarshalJSON()
			wantObj, _ := confedit.ParseObject([]byte(tt.want))
			want, _ := wantObj.MarshalJSON()
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
			slices.Sort(drop)
			if diff := cmp.Diff(tt.wantDrop, drop); diff != "" {
				t.Errorf("dropped credentials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCred, sortedKeys(e.creds), cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
				t.Errorf("new credentials (-want +got):\n%s", diff)
			}
		})
	}
}

// setEnv fills the form's environment pairs: name, value, name, value...
func setEnv(v *formValues, kv ...string) {
	for i := 0; i < len(kv); i += 2 {
		v.envName[i/2], v.envValue[i/2] = kv[i], kv[i+1]
	}
}
