package host_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// BenchmarkCallerConnMemory measures what one caller's connection to a
// server with "oauth.perCaller" holds: b.N callers log in and call once,
// and the heap in use grows by B/conn for each connection kept open (the
// test's own server, in this process, included). Past
// DefaultMaxCallerConns the least recently used are closed.
func BenchmarkCallerConnMemory(b *testing.B) {
	as := oauthtest.Start(b, nil)
	rig := oauthhost.Open(b, as.MCP, &oauthhost.Options{PerCaller: true})
	h := rig.Host
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	op := h.View(host.Caller{})
	l, err := op.Login(ctx, "gh")
	if err != nil {
		b.Fatal(err)
	}
	if err := oauthtest.BrowseAs(ctx, l.URL(), "operator"); err != nil {
		b.Fatal(err)
	}
	<-l.Done()
	views := make([]*host.View, b.N)
	for i := range views {
		views[i] = h.View(host.Caller{Subject: fmt.Sprintf("sub:u%d", i)})
		l, err := views[i].Login(ctx, "gh")
		if err != nil {
			b.Fatal(err)
		}
		if err := oauthtest.BrowseAs(ctx, l.URL(), fmt.Sprintf("u%d", i)); err != nil {
			b.Fatal(err)
		}
		<-l.Done()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for _, v := range views {
		if _, err := whoami(ctx, v, "x"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := h.CallerConns()
	if n != min(b.N, host.DefaultMaxCallerConns) {
		b.Fatalf("%d connections open; want %d (at most DefaultMaxCallerConns)", n, min(b.N, host.DefaultMaxCallerConns))
	}
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(n), "B/conn")
}
