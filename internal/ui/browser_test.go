package ui_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/host"
)

// requireBrowserVar makes a missing Chromium a failure instead of a skip
// (scripts/test.sh sets it).
const requireBrowserVar = "SWITCHBOARD_REQUIRE_BROWSER"

// artifactsVar names a directory for the screenshots; default the test's
// temporary directory.
const artifactsVar = "SWITCHBOARD_TEST_ARTIFACTS"

// chromium returns the path of Debian's chromium, or skips the test (fails
// it when requireBrowserVar is set).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireBrowserVar) != "" {
		t.Fatalf("%s is set and no chromium is installed (apt-get install chromium; scripts/test.sh does it as root)", requireBrowserVar)
	}
	t.Skipf("no chromium on PATH: the status page is not tested in a browser (apt-get install chromium, or run scripts/test.sh; set %s to make this a failure)", requireBrowserVar)
	return ""
}

// TestBrowser drives the status page in headless Chromium: log in, watch
// a server go down (its process killed) and come back (Restart), search
// for a tool, approve a held definition, watch a call appear in the
// recent calls; a hostile tool description shows as text and runs
// nothing. Screenshots of each step are written to $SWITCHBOARD_TEST_ARTIFACTS
// (or the test's temporary directory).
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	p := newPage(t, withDrift)
	shots := os.Getenv(artifactsVar)
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1400), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()

	// Anything the page runs besides ui.js would show as an exception or
	// a dialog.
	var mu sync.Mutex
	var ran []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			ran = append(ran, "exception: "+e.ExceptionDetails.Text)
		case *cdppage.EventJavascriptDialogOpening:
			ran = append(ran, "dialog: "+e.Message)
		}
	}); err != nil {
		t.Fatal(err)
	}

	// step runs actions, each bounded (a failure shows the page), then
	// takes a screenshot named name.
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		for i, a := range actions {
			actx, cancel := context.WithTimeout(ctx, 35*time.Second)
			err := chromedp.Do(actx, a)
			cancel()
			if err != nil {
				html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
				t.Fatalf("%s: action %d: %v\npage:\n%s", name, i+1, err, html)
			}
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// nav runs an action that loads another page (a form's POST), and
	// waits for that page.
	nav := func(a chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.RunResponse(ctx, a)
			return chromedp.Void{}, err
		}
	}
	truthy := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))
	}

	step("01-login",
		chromedp.Navigate(p.url+"/ui"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token-0123456789"),
		nav(chromedp.Submit(chromedp.CSS("#login"))),
		chromedp.WaitVisible(chromedp.CSS("#login-error")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		nav(chromedp.Submit(chromedp.CSS("#login"))),
		chromedp.WaitVisible(chromedp.CSS("#sec-servers")),
		truthy(`document.getElementById("stream").textContent === "live"`),
		truthy(`document.querySelector('#server-demo[data-state="ready"]') !== null`),
	)

	// The hostile description is text, and nothing of it ran.
	desc, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#tool-hostile__lookup .description")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(desc, "<script>window.pwned = 1</script>") || !strings.Contains(desc, `<img src=x onerror=`) {
		t.Errorf("the hostile description is not shown as text: %q", desc)
	}
	check, err := chromedp.Run(ctx, chromedp.Evaluate[string](`typeof window.pwned + " " + document.querySelectorAll("img, #sec-tools script").length`))
	if err != nil || check != "undefined 0" {
		t.Errorf("the hostile description ran or made elements: %q, %v", check, err)
	}

	// Down: its process killed; the stream shows it at once.
	pid := 0
	for _, s := range p.host.Servers() {
		if s.Name == "demo" {
			pid = s.PID
		}
	}
	if pid == 0 {
		t.Fatal("demo has no process")
	}
	// An open stderr panel stays open when its section is replaced.
	step("02-stderr-open",
		truthy(`document.querySelector("#server-drift details") !== null`),
		chromedp.Click(chromedp.CSS("#server-drift details summary")),
		truthy(`document.querySelector("#server-drift details").open`),
	)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	step("02-server-down",
		truthy(`document.querySelector('#server-demo[data-state="degraded"]') !== null`),
	)
	if open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#server-drift details").open`)); err != nil || !open {
		t.Errorf("the stderr panel closed when the servers section was updated: open %v, %v", open, err)
	}
	// Back: Restart.
	step("03-server-back",
		nav(chromedp.Click(chromedp.CSS(`#server-demo button[value="restart"]`))),
		chromedp.WaitVisible(chromedp.CSS("#message")),
		truthy(`document.getElementById("message").textContent === "restarted demo"`),
		truthy(`document.querySelector('#server-demo[data-state="ready"]') !== null`),
	)

	// Search: the same index as `switchboard search`.
	step("04-search",
		chromedp.SetValue(chromedp.CSS("#q"), "add two numbers"),
		nav(chromedp.Submit(chromedp.CSS("#tool-search"))),
		truthy(`location.search.includes("q=add")`),
		chromedp.WaitVisible(chromedp.CSS("#sec-tools details.tool")),
		truthy(`document.querySelector("#sec-tools details.tool").id === "tool-demo__add"`),
		truthy(`document.getElementById("tool-hostile__lookup") === null`),
	)

	// Approve: the held definition, with its diff, released in the host.
	if listed(p.host, "drift__echo") {
		t.Fatal("drift__echo is not held")
	}
	step("05-held",
		chromedp.Navigate(p.url+"/ui#held"),
		truthy(`document.querySelector("#sec-held .diff") !== null && document.querySelector("#sec-held .diff").textContent.includes("attacker@example.com")`),
	)
	step("06-approved",
		nav(chromedp.Click(chromedp.CSS(`#sec-held button[value="approve"]`))),
		truthy(`document.getElementById("message") !== null && document.getElementById("message").textContent === "approved drift:echo"`),
		truthy(`document.querySelector("#sec-held .held") === null`),
	)
	if !listed(p.host, "drift__echo") {
		t.Error("drift__echo is still held after Approve")
	}

	// A call appears in the recent calls, by the stream.
	step("07-before-call", chromedp.Navigate(p.url+"/ui#calls"), truthy(`document.getElementById("stream").textContent === "live"`))
	if _, err := p.host.Call(context.Background(), "demo__echo", json.RawMessage(`{"text":"from the browser test"}`), &host.CallOptions{Client: "browser-test"}); err != nil {
		t.Fatal(err)
	}
	step("08-call",
		truthy(`Array.from(document.querySelectorAll("#sec-calls tr.call")).some(r => r.textContent.includes("browser-test") && r.textContent.includes("demo:echo"))`),
	)
	if text, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#sec-calls"))); strings.Contains(text, "from the browser test") {
		t.Error("recent calls show an argument's value")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(ran) > 0 {
		t.Errorf("the page ran script or opened dialogs: %q", ran)
	}
	t.Logf("screenshots in %s", shots)
}

// listed reports whether the host lists the tool (not while it is held).
func listed(h *host.Host, name string) bool {
	for _, t := range h.Tools() {
		if t.Name == name {
			return true
		}
	}
	return false
}
