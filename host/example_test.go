package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// Build a configuration in code with one stdio server (the reference
// filesystem server, which npx fetches), open it, list the tools and call
// one.
func Example() {
	host.MaybeRunShim() // first in main: each server in a PID namespace of its own
	ctx := context.Background()

	files, err := config.Stdio("files", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs")
	if err != nil {
		log.Fatal(err)
	}
	files.DisabledTools = []string{"write_*", "edit_*", "move_*"}
	cfg, err := config.New(files)
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.Open(ctx, cfg, nil) // state in Switchboard's home, shared with the switchboard command
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	for _, t := range h.Tools() {
		fmt.Println(t.Name, "=", t.ID) // files__read_text_file = files:read_text_file, ...
	}
	res, err := h.Call(ctx, "files__list_directory", json.RawMessage(`{"path":"/srv/docs"}`), nil)
	switch {
	case errors.Is(err, host.ErrTimeout):
		log.Fatal("the server did not answer in time")
	case err != nil:
		log.Fatal(err)
	case res.IsError:
		fmt.Println("the tool failed:", res.Text)
	default:
		fmt.Println(res.Text)
	}
}
