package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Client calls the API of a running gateway.
type Client struct {
	base  string // "http://127.0.0.1:8939", no trailing slash
	token string // "" without authentication
	http  *http.Client
}

// NewClient returns a client of the gateway at base (its scheme, host and
// port) that presents token ("" for none).
func NewClient(base, token string) *Client {
	return &Client{base: base, token: token, http: &http.Client{Timeout: actionTimeout + 10*time.Second}}
}

// Base is the gateway's URL.
func (c *Client) Base() string { return c.base }

// do sends a request to path (under APIPath) and decodes the answer into
// out (unless nil). A refusal becomes a *fault.Error with its code.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	} else if method == http.MethodPost {
		rd = bytes.NewReader([]byte("{}"))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("the gateway at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := bytesize.ReadAll(resp.Body, 64<<20)
	if err != nil {
		return fmt.Errorf("the gateway at %s: %w", c.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			code := fault.Code(e.Error.Code)
			if code == "error" {
				return errors.New(e.Error.Message)
			}
			return fault.New(code, "", "", errors.New(e.Error.Message))
		}
		return fmt.Errorf("the gateway at %s answered %s", c.base, resp.Status)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// Status is the gateway's Status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodGet, APIPath+"servers", nil, &st)
	return st, err
}

// Restart restarts a server of the gateway.
func (c *Client) Restart(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, APIPath+"servers/"+url.PathEscape(name)+"/restart", nil, nil)
}

// SetEnabled enables or disables a server of the gateway.
func (c *Client) SetEnabled(ctx context.Context, name string, on bool) error {
	verb := "disable"
	if on {
		verb = "enable"
	}
	return c.do(ctx, http.MethodPost, APIPath+"servers/"+url.PathEscape(name)+"/"+verb, nil, nil)
}

// Held returns the gateway's held definitions of target ("" for all, a
// server, or "server:tool"), with their diffs.
func (c *Client) Held(ctx context.Context, t string) ([]Held, error) {
	var out []Held
	err := c.do(ctx, http.MethodGet, APIPath+"held?target="+url.QueryEscape(t), nil, &out)
	return out, err
}

// Approve approves held definitions in the gateway and returns their
// labels.
func (c *Client) Approve(ctx context.Context, t string) ([]string, error) {
	var out struct {
		Approved []string `json:"approved"`
	}
	err := c.do(ctx, http.MethodPost, APIPath+"approve", target{Target: t}, &out)
	return out.Approved, err
}

// Calls returns recent calls of the gateway's audit log.
func (c *Client) Calls(ctx context.Context, f store.CallFilter) ([]store.Call, error) {
	q := url.Values{}
	if f.Server != "" {
		q.Set("server", f.Server)
	}
	if f.Tool != "" {
		q.Set("tool", f.Tool)
	}
	if f.Caller != "" {
		q.Set("caller", f.Caller)
	}
	if f.Outcome != "" {
		q.Set("outcome", f.Outcome)
	}
	if f.Run != "" {
		q.Set("run", f.Run)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var entries []CallEntry
	if err := c.do(ctx, http.MethodGet, APIPath+"calls?"+q.Encode(), nil, &entries); err != nil {
		return nil, err
	}
	out := make([]store.Call, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Call())
	}
	return out, nil
}

// Reject rejects a held definition in the gateway (see Control.Reject).
func (c *Client) Reject(ctx context.Context, t string) error {
	return c.do(ctx, http.MethodPost, APIPath+"reject", target{Target: t}, nil)
}
