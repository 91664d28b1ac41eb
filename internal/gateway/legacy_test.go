package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// The raw path for legacy sessions (legacy.go) must answer exactly what
// go-sdk's path answers, as the 2026-07-28 raw path must (raw_test.go).

// legacySession opens a 2025-11-25 session on url by hand, as go-sdk's
// client does, and returns the headers its requests carry.
func legacySession(t *testing.T, url string) map[string]string {
	t.Helper()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"legacy-test","version":"1"}}}`
	send := func(body string, headers map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: HTTP %d", body, resp.StatusCode)
		}
		return resp
	}
	id := send(init, nil).Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize made no session")
	}
	h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "", "Mcp-Name": ""}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	return h
}

// legacyCall is a tools/call body as a legacy client writes it.
func legacyCall(id, name, args string) string {
	a := ""
	if args != "" {
		a = `,"arguments":` + args
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"` + a + `}}`
}

// withMeta adds a _meta to a legacyCall body.
func withMeta(body, meta string) string {
	return strings.Replace(body, `"params":{`, `"params":{"_meta":`+meta+`,`, 1)
}

func TestRawLegacyCallsAnswerAsGoSDK(t *testing.T) {
	f := newCasesFixture(t)
	rawSession, sdkSession := legacySession(t, f.raw), legacySession(t, f.sdk)
	big := `"` + strings.Repeat("a", 100<<10) + `"`
	cases := []rawCase{
		{name: "normal call, HTTP upstream", body: legacyCall("1", "web__echo", `{"text":"hi"}`), raw: true,
			check: func(t *testing.T, a answer) {
				res := a.result(t)
				if res["isError"] != nil || res["_meta"] != nil {
					t.Errorf("result %v: want no isError and no _meta (the upstream's serverInfo is stripped)", res)
				}
			}},
		{name: "normal call, stdio upstream", body: legacyCall(`"str-id"`, "s__echo", `{"text":"hi"}`), raw: true},
		{name: "100 KB arguments", body: legacyCall("2", "web__echo", `{"text":`+big+`}`), raw: true},
		{name: "no arguments", body: legacyCall("3", "s__fail", ""), raw: true},
		{name: "null arguments", body: legacyCall("4", "s__fail", "null"), raw: true},
		{name: "isError result", body: legacyCall("5", "web__fail", `{}`), raw: true,
			check: func(t *testing.T, a answer) {
				if a.result(t)["isError"] != true {
					t.Errorf("result %v, want isError", a.Message)
				}
			}},
		{name: "unavailable upstream", body: legacyCall("7", "gone__echo", `{"text":"x"}`), raw: true,
			check: func(t *testing.T, a answer) {
				meta, _ := a.result(t)["_meta"].(map[string]any)
				if e, _ := meta[gateway.ErrorMetaKey].(map[string]any); e["server"] != "gone" {
					t.Errorf("result %v, want an error naming gone", a.Message)
				}
			}},
		{name: "policy-denied tool", body: legacyCall("8", "web__roots", `{}`), raw: true},
		{name: "text over the result cap", body: legacyCall("9", "web__big", `{"bytes":5000}`), raw: true},
		{name: "result over the frame cap", body: legacyCall("10", "s__big", `{"bytes":200000}`), raw: true},
		{name: "own _meta", body: withMeta(legacyCall("11", "s__echo", `{"text":"m"}`), `{"x":1}`), raw: true},
		{name: "client without elicitation asks", body: legacyCall("13", "web__ask", `{}`), raw: true},
		{name: "progress token, no progress", body: withMeta(legacyCall("14", "s__echo", `{"text":"p"}`), `{"progressToken":"tok"}`), raw: true},
		{name: "progress token, progress (handed over)", body: withMeta(legacyCall("15", "web__slow", `{"steps":2,"delay_ms":1}`), `{"progressToken":7}`), raw: true,
			check: func(t *testing.T, a answer) {
				if m, _ := a.Message.(map[string]any); m["method"] != "notifications/progress" {
					t.Errorf("first event %v, want a progress notification", a.Message)
				}
			}},
		{name: "null progress token", body: withMeta(legacyCall("16", "web__slow", `{"steps":1,"delay_ms":1}`), `{"progressToken":null}`), raw: true},
		// Left to go-sdk.
		{name: "unknown tool", body: legacyCall("20", "nope__echo", `{}`), raw: false},
		{name: "escaped _meta key", body: withMeta(legacyCall("27", "web__slow", `{"steps":1,"delay_ms":1}`), `{"progress\u0054oken":"t"}`), raw: false},
		{name: "protocol _meta key", body: withMeta(legacyCall("22", "s__echo", `{"text":"p"}`), `{"io.modelcontextprotocol/x":1}`), raw: false},
		{name: "Mcp-Method header", body: legacyCall("23", "s__echo", `{"text":"p"}`), headers: map[string]string{"Mcp-Method": "tools/call"}, raw: false},
		{name: "2025-03-26 (no header)", body: legacyCall("24", "s__echo", `{"text":"p"}`), headers: map[string]string{"Mcp-Protocol-Version": ""}, raw: false},
		{name: "arguments not an object", body: legacyCall("25", "s__echo", `[1]`), raw: false},
		{name: "batch", body: "[" + legacyCall("26", "s__echo", `{}`) + "]", raw: false},
		{name: "escaped id", body: legacyCall(`"a\u0062"`, "s__echo", `{"text":"e"}`), raw: false},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, raw: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withSession := func(session map[string]string) map[string]string {
				h := map[string]string{}
				for k, v := range session {
					h[k] = v
				}
				for k, v := range c.headers {
					h[k] = v
				}
				return h
			}
			before := f.served.n.Load()
			got := post(t, f.raw, c.body, withSession(rawSession))
			if served := f.served.n.Load() - before; served != map[bool]int64{true: 1, false: 0}[c.raw] {
				t.Errorf("raw path served %d calls, want raw=%t", served, c.raw)
			}
			want := post(t, f.sdk, c.body, withSession(sdkSession))
			got = maskAnswer(got)
			if !sameAnswer(t, got, maskAnswer(want)) {
				return
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
	t.Run("unknown session", func(t *testing.T) {
		h := withSessionID(rawSession, "NOSUCHSESSION")
		before := f.served.n.Load()
		got := post(t, f.raw, legacyCall("30", "s__echo", `{}`), h)
		if f.served.n.Load() != before || got.Status != http.StatusNotFound {
			t.Errorf("answer %+v (raw %t), want go-sdk's 404", got, f.served.n.Load() != before)
		}
	})
	t.Run("ended session", func(t *testing.T) {
		s := legacySession(t, f.raw)
		if status := deleteSession(t, f.raw, s["Mcp-Session-Id"], "2025-11-25"); status != http.StatusNoContent {
			t.Fatalf("DELETE: HTTP %d", status)
		}
		before := f.served.n.Load()
		got := post(t, f.raw, legacyCall("31", "s__echo", `{}`), s)
		if f.served.n.Load() != before || got.Status != http.StatusNotFound {
			t.Errorf("answer %+v (raw %t), want go-sdk's 404", got, f.served.n.Load() != before)
		}
	})
}

func withSessionID(h map[string]string, id string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	out["Mcp-Session-Id"] = id
	return out
}

// TestRawLegacySessionIdle: a session of the raw path's endpoint stays
// open while it is used, raw calls included, and one longer than the idle
// timeout; it is closed once idle for that long, as go-sdk closes its own.
func TestRawLegacySessionIdle(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	const idle = time.Second
	gateway.SetSessionIdle(f.gateway, idle)
	cs := legacyClient(t, f.raw)
	call := func(name string, args map[string]any) error {
		t.Helper()
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		return err
	}
	before := f.served.n.Load()
	for range 8 { // 2.4 s of use, in calls served raw
		if err := call("s__echo", map[string]any{"text": "k"}); err != nil {
			t.Fatalf("session closed while in use: %v", err)
		}
		time.Sleep(idle * 3 / 10)
	}
	if err := call("web__slow", map[string]any{"steps": 4, "delay_ms": 400}); err != nil {
		t.Fatalf("a call longer than the idle timeout: %v", err)
	}
	if err := call("s__echo", map[string]any{"text": "k"}); err != nil {
		t.Fatalf("the session closed during a call longer than the idle timeout: %v", err)
	}
	if served := f.served.n.Load() - before; served != 10 {
		t.Errorf("%d calls served raw, want 10", served)
	}
	time.Sleep(5 * idle / 2)
	if err := call("s__echo", map[string]any{"text": "k"}); err == nil {
		t.Error("a call after the idle timeout succeeded: the session was not closed")
	}
	if !proc.Eventually(5*time.Second, func() bool { return gateway.LegacySessions(f.gateway) == 0 }) {
		t.Errorf("%d sessions still known after the only one ended", gateway.LegacySessions(f.gateway))
	}
}

// legacyClient connects a go-sdk client pinned to 2025-11-25 to url.
func legacyClient(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestRawLegacyHandoverHeader: a client's own handover header is removed
// before go-sdk sees it, even one naming a real (withdrawn) handover.
func TestRawLegacyHandoverHeader(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	s := legacySession(t, f.raw)
	token := gateway.PlantWithdrawnHandover(f.gateway, s["Mcp-Session-Id"])
	h := withSessionID(s, s["Mcp-Session-Id"])
	h["Switchboard-Handover"] = token
	h["Mcp-Method"] = "tools/call" // not served raw: the request goes to go-sdk
	a := post(t, f.raw, legacyCall("1", "s__echo", `{"text":"h"}`), h)
	if res := a.result(t); res["isError"] != nil {
		t.Errorf("answer %v, want the echo", a.Message)
	}
}

// TestRawLegacyLogLevel: a session whose client set a log level gets its
// calls from go-sdk, which sends it log messages on the call's stream.
func TestRawLegacyLogLevel(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	cs := legacyClient(t, f.raw)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	before := f.served.n.Load()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "l"}}); err != nil {
		t.Fatal(err)
	}
	if f.served.n.Load() != before {
		t.Error("a call of a session with a log level served raw")
	}
}

// TestRawLegacyCancel: a legacy client that gives up on a call served raw
// (its request ends, then notifications/cancelled) cancels the upstream's
// handler; one that only goes away does not, as with go-sdk.
func TestRawLegacyCancel(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	cs := legacyClient(t, f.raw)
	before, started, served := testkit.SlowCancelled.Load(), testkit.SlowStarted.Load(), f.served.n.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web__slow", Arguments: map[string]any{"steps": 100, "delay_ms": 50}})
		errc <- err
	}()
	if !proc.Eventually(10*time.Second, func() bool { return testkit.SlowStarted.Load() > started }) {
		t.Fatal("the call never started")
	}
	if f.served.n.Load() == served {
		t.Fatal("the call was not served raw")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call succeeded")
	}
	if !proc.Eventually(5*time.Second, func() bool { return testkit.SlowCancelled.Load() > before }) {
		t.Error("the upstream handler never saw the cancellation")
	}

	// Going away: the request ends, nothing is cancelled; the call runs
	// to its end.
	s := legacySession(t, f.raw)
	before, started, served = testkit.SlowCancelled.Load(), testkit.SlowStarted.Load(), f.served.n.Load()
	done := testkit.SlowDone.Load()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.raw, strings.NewReader(legacyCall("2", "web__slow", `{"steps":4,"delay_ms":100}`)))
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Session-Id": s["Mcp-Session-Id"], "Mcp-Protocol-Version": "2025-11-25"} {
		req.Header.Set(k, v)
	}
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	if !proc.Eventually(10*time.Second, func() bool { return testkit.SlowStarted.Load() > started }) {
		t.Fatal("the second call never started")
	}
	if f.served.n.Load() == served {
		t.Fatal("the second call was not served raw")
	}
	cancel() // the client goes away
	if !proc.Eventually(10*time.Second, func() bool { return testkit.SlowDone.Load() > done }) {
		t.Error("the call of a client that went away did not run to its end")
	}
	if n := testkit.SlowCancelled.Load() - before; n != 0 {
		t.Errorf("a client going away cancelled %d calls, want 0", n)
	}
}

// TestRawLegacyCancelAnswer: a call cancelled by notifications/cancelled
// is answered as go-sdk answers it (an error, never code 0, never an empty
// response), and its upstream handler is cancelled.
func TestRawLegacyCancelAnswer(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	answers := map[string]answer{}
	for _, url := range []string{f.raw, f.sdk} {
		s := legacySession(t, url)
		before, started := testkit.SlowCancelled.Load(), testkit.SlowStarted.Load()
		type result struct {
			a   answer
			err error
		}
		done := make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(legacyCall(`"c-1"`, "web__slow", `{"steps":100,"delay_ms":50}`)))
			for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream", "Mcp-Session-Id": s["Mcp-Session-Id"], "Mcp-Protocol-Version": "2025-11-25"} {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- result{err: err}
				return
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			a := answer{Status: resp.StatusCode, MediaType: resp.Header.Get("Content-Type")}
			if err == nil {
				err = json.Unmarshal(firstEventData(t, data), &a.Message)
			}
			done <- result{a, err}
		}()
		if !proc.Eventually(10*time.Second, func() bool { return testkit.SlowStarted.Load() > started }) {
			t.Fatalf("%s: the call never started", url)
		}
		post(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"test"}}`, s)
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("%s: %v", url, r.err)
			}
			answers[url] = r.a
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the cancelled call was never answered", url)
		}
		if !proc.Eventually(5*time.Second, func() bool { return testkit.SlowCancelled.Load() > before }) {
			t.Errorf("%s: the upstream handler never saw the cancellation", url)
		}
	}
	got, want := answers[f.raw], answers[f.sdk]
	if sameAnswer(t, got, want) {
		e, _ := got.Message.(map[string]any)["error"].(map[string]any)
		if code, _ := e["code"].(float64); code == 0 {
			t.Errorf("answer %v: want an error with a code", got.Message)
		}
	}
}

// TestRawLegacyRefusedDelete: a DELETE go-sdk refuses leaves the session
// as it was: still served raw, still known (so its idle timer runs).
func TestRawLegacyRefusedDelete(t *testing.T) {
	f := newRawFixture(t, nil, 0)
	s := legacySession(t, f.raw)
	if status := deleteSession(t, f.raw, s["Mcp-Session-Id"], "1999-01-01"); status == http.StatusNoContent {
		t.Fatalf("DELETE with an unsupported version: %d, want a refusal", status)
	}
	before := f.served.n.Load()
	a := post(t, f.raw, legacyCall("1", "s__echo", `{"text":"d"}`), s)
	if res := a.result(t); res["isError"] != nil || f.served.n.Load() == before {
		t.Errorf("after a refused DELETE: %v (raw %t), want the echo served raw", a.Message, f.served.n.Load() != before)
	}
	if gateway.LegacySessions(f.gateway) != 1 {
		t.Errorf("%d sessions known, want 1", gateway.LegacySessions(f.gateway))
	}
}

// deleteSession sends a DELETE for session with the protocol version
// header given and returns the HTTP status.
func deleteSession(t *testing.T, url, session, version string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
