// Package state is the state store as Switchboard's processes open and
// read it: Open picks PostgreSQL or the embedded SQLite store, List and
// Approve read and pin the held definitions. The host, the gateway's
// control layer and the CLI all go through it, so each opens the same
// store and reads held definitions the same way.
package state

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/postgres"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// File is the SQLite store's file name in its directory.
const File = "state.db"

// openTimeout bounds connecting to (and migrating) a PostgreSQL store.
const openTimeout = 30 * time.Second

// Open opens the state store: the PostgreSQL database that postgresURL
// names, else SQLite at dir/state.db (the directory made if need be).
func Open(ctx context.Context, postgresURL, dir string) (store.Store, error) {
	if postgresURL != "" {
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		return postgres.Open(ctx, postgresURL, nil)
	}
	return sqlite.Open(filepath.Join(dir, File), nil)
}

// Held is a definition held back until it is approved.
type Held struct {
	Server string `json:"server"`
	// Tool is the tool's name; "" for the server's instructions.
	Tool string `json:"tool"`
	// Injection: held because its metadata matches an injection pattern,
	// not because it changed.
	Injection bool `json:"injection,omitempty"`
	// Launch: the server's launch (command, arguments, environment, URL;
	// Tool is ""), held because it differs from the one approved or was
	// never approved.
	Launch bool `json:"launch,omitempty"`
	// Target names it for Approve: "server:tool" (or the server's name for
	// its instructions).
	Target string `json:"target"`
	// Label names it for people.
	Label string `json:"label"`
	// Diff is what changed since it was approved (escaped).
	Diff string `json:"diff"`
}

// List reads the held definitions of target ("" for all, a server, or
// "server:tool") from st, with their diffs against what was approved.
func List(ctx context.Context, st store.Store, target string) ([]Held, error) {
	server, tool, one := Cut(target)
	drifts, err := st.Drifts(ctx, server)
	if err != nil {
		return nil, err
	}
	pins := map[string]map[string][]byte{}
	var out []Held
	for _, d := range drifts {
		if one && !HeldAs(d.Tool, tool) {
			continue
		}
		if pins[d.Server] == nil {
			ps, err := st.Pins(ctx, d.Server)
			if err != nil {
				return nil, err
			}
			pins[d.Server] = map[string][]byte{}
			for _, p := range ps {
				pins[d.Server][p.Tool] = p.Definition
			}
		}
		name, inj := ingest.ApprovalTool(d.Tool)
		launch := d.Tool == drift.LaunchKey
		switch {
		case launch:
			name = ""
		case !inj:
			name = d.Tool
		}
		target := d.Server
		if name != "" {
			target += ":" + name
		}
		shown := name
		if launch {
			shown = drift.LaunchKey
		}
		out = append(out, Held{
			Server: d.Server, Tool: name, Injection: inj, Launch: launch, Target: target, Label: Label(d.Server, d.Tool),
			// drift.Diff escapes what it shows.
			Diff: drift.Diff(drift.Change{Tool: shown, Old: pins[d.Server][d.Tool], New: d.Definition}),
		})
	}
	return out, nil
}

// Approve pins the held definitions of target (a server, or
// "server:tool") in st; a server's held launch is approved with its
// server, never by a "server:tool" target. It returns the labels of what it approved;
// nothing held is a not_found error.
func Approve(ctx context.Context, st store.Store, target string) ([]string, error) {
	server, tool, one := Cut(target)
	drifts, err := st.Drifts(ctx, server)
	if err != nil {
		return nil, err
	}
	var approved []string
	for _, d := range drifts {
		if one && !HeldAs(d.Tool, tool) {
			continue
		}
		if err := st.Pin(ctx, store.Pin{Server: d.Server, Tool: d.Tool, Hash: d.Hash, Definition: d.Definition}); err != nil {
			return approved, err
		}
		approved = append(approved, Label(d.Server, d.Tool))
	}
	if len(approved) == 0 {
		return nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("nothing to approve for %s: no held definition", target))
	}
	return approved, nil
}

// Cut splits "server:tool" (at the last colon); one is false for a bare
// server name.
func Cut(target string) (server, tool string, one bool) {
	if i := strings.LastIndexByte(target, ':'); i > 0 {
		return target[:i], target[i+1:], true
	}
	return target, "", false
}

// Label names a held definition stored under key for people.
func Label(server, key string) string {
	if t, ok := ingest.ApprovalTool(key); ok {
		return server + ":" + t + " (held: its metadata matches an injection pattern)"
	}
	switch key {
	case "":
		return server + " (instructions)"
	case drift.LaunchKey:
		return server + " (launch: command, arguments, environment, URL)"
	}
	return server + ":" + key
}

// HeldAs reports whether a held definition stored under key is tool's:
// its drift, or its hold for an injection pattern.
func HeldAs(key, tool string) bool {
	if t, ok := ingest.ApprovalTool(key); ok {
		return t == tool
	}
	if key == drift.LaunchKey {
		return false // approved with its server, never as a tool
	}
	return key == tool
}

// ApproveLaunch pins def as the approved launch of server in st (what a
// person approves by adding or editing the server through the CLI), and
// marks the store as one whose launches are pinned.
func ApproveLaunch(ctx context.Context, st store.Store, server string, def []byte) error {
	if err := st.Pin(ctx, store.Pin{Server: server, Tool: drift.LaunchKey, Hash: drift.Hash(def), Definition: def}); err != nil {
		return err
	}
	return MarkLaunchesPinned(ctx, st)
}

// LaunchesPinned reports whether st pins launches: whether a version
// that pins them has opened it (see drift.LaunchBegun).
func LaunchesPinned(ctx context.Context, st store.Store) (bool, error) {
	pins, err := st.Pins(ctx, "")
	if err != nil {
		return false, err
	}
	for _, p := range pins {
		if p.Tool == drift.LaunchBegun {
			return true, nil
		}
	}
	return false, nil
}

// MarkLaunchesPinned records in st that its launches are pinned.
func MarkLaunchesPinned(ctx context.Context, st store.Store) error {
	return st.Pin(ctx, store.Pin{Server: "", Tool: drift.LaunchBegun, Hash: "-", Definition: []byte("{}")})
}
