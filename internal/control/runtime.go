package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// RuntimeFile is the file in the home where a running `serve --http` says
// where it listens, so that the CLI's commands act on the live gateway.
const RuntimeFile = "serve.json"

// healthPath is the front door's liveness endpoint.
const healthPath = "/healthz"

// probeTimeout bounds the liveness check of a gateway found in the home.
const probeTimeout = 2 * time.Second

// Runtime is what RuntimeFile holds. It never holds the token: only where
// it is kept.
type Runtime struct {
	URL       string    `json:"url"` // "http://127.0.0.1:8939"
	PID       int       `json:"pid"`
	TokenFile string    `json:"tokenFile,omitempty"` // the token is kept in this file
	TokenEnv  string    `json:"tokenEnv,omitempty"`  // the token is this variable's value (--token-env)
	NoAuth    bool      `json:"noAuth,omitempty"`
	Config    string    `json:"config,omitempty"` // the configuration in use
	Started   time.Time `json:"started"`
}

// WriteRuntime writes rt to the home's RuntimeFile (mode 0600, replaced
// atomically) and returns the function that removes it again, unless
// another gateway has replaced it meanwhile.
func WriteRuntime(home string, rt Runtime) (remove func(), err error) {
	path := filepath.Join(home, RuntimeFile)
	data, err := json.MarshalIndent(rt, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := confedit.WriteAtomic(path, append(data, '\n'), 0o600); err != nil {
		return nil, err
	}
	return func() {
		if cur, err := readRuntime(path); err == nil && cur.PID == rt.PID && cur.URL == rt.URL {
			os.Remove(path)
		}
	}, nil
}

func readRuntime(path string) (*Runtime, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rt Runtime
	if err := json.Unmarshal(data, &rt); err != nil {
		return nil, err
	}
	return &rt, nil
}

// ErrNoGateway says that no gateway runs for the home: no RuntimeFile, or
// a stale one (its process is gone, or nothing answers at its URL).
var ErrNoGateway = errors.New("no gateway runs for this home")

// Find returns a client of the gateway running for home, as its
// RuntimeFile says, once it answers its liveness check; ErrNoGateway when
// none runs. lookupEnv reads the token of a gateway started with
// --token-env. Another error means a gateway runs but cannot be used (its
// token is not available here).
func Find(ctx context.Context, home string, lookupEnv func(string) (string, bool)) (*Client, *Runtime, error) {
	rt, err := readRuntime(filepath.Join(home, RuntimeFile))
	if err != nil || rt.URL == "" || !strings.HasPrefix(rt.URL, "http://") {
		return nil, nil, ErrNoGateway
	}
	if rt.PID > 0 {
		if p, err := os.FindProcess(rt.PID); err == nil && errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			return nil, nil, ErrNoGateway
		}
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, rt.URL+healthPath, nil)
	if err != nil {
		return nil, nil, ErrNoGateway
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, ErrNoGateway
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, ErrNoGateway
	}
	token := ""
	switch {
	case rt.NoAuth:
	case rt.TokenEnv != "":
		tok, ok := lookupEnv(rt.TokenEnv)
		if !ok || tok == "" {
			return nil, rt, fmt.Errorf("the gateway at %s takes its token from $%s, which is not set here", rt.URL, rt.TokenEnv)
		}
		token = tok
	case rt.TokenFile != "":
		data, err := os.ReadFile(rt.TokenFile)
		if err != nil {
			return nil, rt, fmt.Errorf("the gateway at %s: its token: %w", rt.URL, err)
		}
		token = strings.TrimSpace(string(data))
	}
	return NewClient(rt.URL, token), rt, nil
}
