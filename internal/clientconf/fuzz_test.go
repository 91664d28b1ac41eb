package clientconf

import (
	"bytes"
	"slices"
	"testing"
)

// fuzzRoundTrip reads data as c's file and, when it reads, connects the
// gateway and disconnects it again: the connected file must read back
// with the gateway and the others, and the disconnect must give back the
// original bytes.
func fuzzRoundTrip(t *testing.T, c *Client, name string, data []byte, move bool) {
	res, err := Parse(c, name, data)
	if err != nil {
		return
	}
	for _, s := range res.Secrets {
		if s.Name == "" || envName(s.Name) != s.Name {
			t.Fatalf("secret name %q is not a variable name", s.Name)
		}
	}
	ch := &Change{Path: name, Backup: name + BackupSuffix, Before: data}
	if err := plan(c, ch, gatewayFor(c.ID), Options{Move: move}); err != nil {
		return
	}
	after, err := Parse(c, name, ch.After)
	if err != nil {
		t.Fatalf("the connected file does not read: %v\n%s", err, ch.After)
	}
	if !slices.ContainsFunc(after.Servers, func(e Entry) bool { return e.Name == DefaultName && e.Project == "" }) {
		t.Fatalf("no gateway entry after connect:\n%s", ch.After)
	}
	dc := &Change{Path: name, Backup: ch.Backup, Before: ch.After}
	if err := undo(c, dc, data, Options{}); err != nil {
		t.Fatalf("disconnect: %v\nbefore:\n%s\nafter:\n%s", err, data, ch.After)
	}
	if dc.After == nil {
		if len(bytes.TrimSpace(data)) != 0 {
			t.Fatalf("disconnect removes a file that was not empty:\n%q", data)
		}
		return
	}
	if !bytes.Equal(dc.After, data) {
		t.Fatalf("disconnect gave\n%q\nnot the original\n%q", dc.After, data)
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range samples {
		if s.client != "codex" {
			f.Add(readSample(f, s.file), uint8(0))
		}
	}
	for _, s := range []string{
		`{}`, `{"mcpServers":{}}`, `{"mcpServers":null}`, `{"servers":{"a":{"command":"x"},},}`,
		"{\n\t\"mcp\": {\"servers\": {}} // c\n}", `{"mcpServers":{"a":{"url":"https://h?key=v&x","headers":{"Authorization":"Bearer t"}}}}`,
		`{"mcpServers":{"a":{"command":"x","env":{"K":"${env:A}$B${input:c}${workspaceFolder}"}}}}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	var jsonClients []*Client
	for _, c := range Clients() {
		if c.Format == JSON {
			jsonClients = append(jsonClients, c)
		}
	}
	names := []string{"mcp.json", "settings.json"}
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		c := jsonClients[int(sel)%len(jsonClients)]
		name := names[int(sel/16)%len(names)]
		fuzzRoundTrip(t, c, name, data, sel&8 != 0)
	})
}

func FuzzTOML(f *testing.F) {
	f.Add(readSample(f, "codex_config.toml"), false)
	for _, s := range []string{
		"", "a = 1\n", "[mcp_servers.a]\ncommand = \"x\"\n", "[mcp_servers]\na = { command = \"x\" }\n",
		"# c\n[mcp_servers.\"a b\"]\nurl = \"https://h\"\n[mcp_servers.\"a b\".env]\nK = \"v\"\n",
		"[mcp_servers.switchboard]\ncommand = \"old\"\n[x]\ny = 1\n",
	} {
		f.Add([]byte(s), true)
	}
	c := mustClient(f, "codex")
	f.Fuzz(func(t *testing.T, data []byte, move bool) {
		fuzzRoundTrip(t, c, "config.toml", data, move)
	})
}
