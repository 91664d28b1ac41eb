package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// Open the embedded default configuration (the demo server, launched from
// this binary), list the tools and call one. The state store is kept in a
// directory of its own.
func Example() {
	exe, _ := os.Executable()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "switchboard-example")
	defer os.RemoveAll(dir)
	h, err := host.Open(ctx, config.Default(exe), &host.Options{StateDir: dir})
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	defer h.Close()

	for _, t := range h.Tools()[:2] {
		fmt.Println(t.Name, "=", t.ID)
	}
	res, err := h.Call(ctx, "demo__add", json.RawMessage(`{"a":2,"b":40}`), nil)
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println(res.Text, res.IsError)

	res, _ = h.Call(ctx, "demo:fail", nil, nil)
	fmt.Println("isError:", res.IsError)
	// Output:
	// demo__add = demo:add
	// demo__echo = demo:echo
	// {"sum":42} false
	// isError: true
}
