package host_test

import (
	"context"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// BenchmarkCallParallel: 16 callers spread over four servers. A call takes
// no Host lock, so calls to different servers do not wait for each other.
func BenchmarkCallParallel(b *testing.B) {
	servers := map[string]any{}
	names := []string{"a__echo", "b__echo", "c__echo", "d__echo"}
	for _, n := range []string{"a", "b", "c", "d"} {
		servers[n] = child(b, testkit.ModeServer, nil)
	}
	h := open(b, parse(b, servers, nil))
	args := json.RawMessage(`{"text":"x"}`)
	for _, n := range names {
		call(b, h, n, string(args))
	}
	var next atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		name := names[next.Add(1)%int64(len(names))]
		for pb.Next() {
			if _, err := h.Call(context.Background(), name, args, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
