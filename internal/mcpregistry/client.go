package mcpregistry

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
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// DefaultURL is the official registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// Defaults of [Options].
const (
	DefaultMaxBytes = 4 << 20
	DefaultTimeout  = 20 * time.Second
)

// Reason says why a request to the registry failed; stable, for programs.
type Reason string

const (
	// NotFound: the registry has no such server, or no such version.
	NotFound Reason = "not_found"
	// BadDocument: the answer is not a document this package can use
	// (not JSON, the wrong shape, too large, unsafe values).
	BadDocument Reason = "bad_document"
	// Unreachable: no answer (connection, timeout, an HTTP status other
	// than 404).
	Unreachable Reason = "unreachable"
)

// Error is a failed request: the registry, the server asked for ("" for
// a listing), why, and what went wrong.
type Error struct {
	Registry string
	Server   string // NAME or NAME@VERSION
	Reason   Reason
	Err      error
}

func (e *Error) Error() string {
	what := "registry " + e.Registry
	if e.Server != "" {
		what = fmt.Sprintf("server %s in registry %s", e.Server, e.Registry)
	}
	switch e.Reason {
	case NotFound:
		return fmt.Sprintf("%s: not found", what)
	case BadDocument:
		return fmt.Sprintf("%s: unusable answer: %v", what, e.Err)
	default:
		return fmt.Sprintf("%s: unreachable: %v", what, e.Err)
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Options configure a [Client]; nil means every default.
type Options struct {
	// MaxBytes caps an answer's body; default DefaultMaxBytes.
	MaxBytes int64
	// Timeout bounds each request; default DefaultTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests; default a client of its own that
	// follows no redirect to another host.
	HTTPClient *http.Client
}

// Client reads one registry.
type Client struct {
	base     *url.URL
	maxBytes int64
	timeout  time.Duration
	hc       *http.Client
}

// New returns a client of the registry at rawURL (http or https; a path
// is kept as the API's prefix).
func New(rawURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("registry URL %q: want http(s)://host[/path]", rawURL)
	}
	if opts == nil {
		opts = &Options{}
	}
	c := &Client{base: u, maxBytes: opts.MaxBytes, timeout: opts.Timeout, hc: opts.HTTPClient}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.hc == nil {
		c.hc = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
				return errors.New("redirect to another host refused")
			}
			return nil
		}}
	}
	return c, nil
}

// URL is the registry's URL, as errors name it.
func (c *Client) URL() string { return c.base.String() }

// ListOptions select a page of a listing.
type ListOptions struct {
	// Search keeps the servers whose name contains it.
	Search string
	// Cursor is a page's NextCursor: the page after it.
	Cursor string
	// Limit is the most servers on the page (the registry's default
	// when 0).
	Limit int
	// Latest keeps only each server's latest version.
	Latest bool
}

// List returns one page of the registry's servers.
func (c *Client) List(ctx context.Context, o ListOptions) (*Page, error) {
	q := url.Values{}
	if o.Search != "" {
		q.Set("search", o.Search)
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Latest {
		q.Set("version", "latest")
	}
	body, err := c.get(ctx, "/v0.1/servers", q, "")
	if err != nil {
		return nil, err
	}
	var raw struct {
		Servers  json.RawMessage `json:"servers"`
		Metadata struct {
			NextCursor string `json:"nextCursor"`
		} `json:"metadata"`
	}
	if err := decode(body, &raw); err != nil {
		return nil, &Error{Registry: c.URL(), Reason: BadDocument, Err: err}
	}
	if raw.Servers == nil {
		return nil, &Error{Registry: c.URL(), Reason: BadDocument, Err: errors.New(`not a list of servers: no "servers" member`)}
	}
	page := &Page{NextCursor: raw.Metadata.NextCursor}
	if err := json.Unmarshal(raw.Servers, &page.Servers); err != nil {
		return nil, &Error{Registry: c.URL(), Reason: BadDocument, Err: fmt.Errorf("servers: %v", err)}
	}
	for i := range page.Servers {
		if err := page.Servers[i].Server.Check(); err != nil {
			return nil, &Error{Registry: c.URL(), Reason: BadDocument, Err: fmt.Errorf("servers[%d]: %w", i, err)}
		}
	}
	if len(page.Servers) > 0 && page.NextCursor != "" && !printable(page.NextCursor) {
		return nil, &Error{Registry: c.URL(), Reason: BadDocument, Err: errors.New("metadata.nextCursor holds a control character")}
	}
	return page, nil
}

// Get returns one version of the server called name; version "" is the
// latest.
func (c *Client) Get(ctx context.Context, name, version string) (*Entry, error) {
	if version == "" {
		version = "latest"
	}
	ref := name + "@" + version
	if err := checkName(name); err != nil {
		return nil, &Error{Registry: c.URL(), Server: ref, Reason: NotFound, Err: err}
	}
	path := "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	body, err := c.get(ctx, path, nil, ref)
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := decode(body, &e); err != nil {
		return nil, &Error{Registry: c.URL(), Server: ref, Reason: BadDocument, Err: err}
	}
	if err := e.Server.Check(); err != nil {
		return nil, &Error{Registry: c.URL(), Server: ref, Reason: BadDocument, Err: err}
	}
	if e.Server.Name != name {
		return nil, &Error{Registry: c.URL(), Server: ref, Reason: BadDocument,
			Err: fmt.Errorf("the answer describes server %q", e.Server.Name)}
	}
	if version != "latest" && e.Server.Version != version {
		return nil, &Error{Registry: c.URL(), Server: ref, Reason: BadDocument,
			Err: fmt.Errorf("the answer describes version %q", e.Server.Version)}
	}
	return &e, nil
}

// get sends a GET for path (under the base URL's path) and returns the
// body of a 200 answer, at most maxBytes.
func (c *Client) get(ctx context.Context, path string, q url.Values, server string) ([]byte, error) {
	fail := func(r Reason, err error) error { return &Error{Registry: c.URL(), Server: server, Reason: r, Err: err} }
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.URL() + path // path's name and version are escaped already
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fail(Unreachable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fail(Unreachable, err)
	}
	defer resp.Body.Close()
	body, err := bytesize.ReadAll(resp.Body, c.maxBytes)
	tooLarge := errors.Is(err, bytesize.ErrTooLarge)
	if err != nil && !tooLarge {
		return nil, fail(Unreachable, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fail(NotFound, nil)
	case resp.StatusCode != http.StatusOK:
		return nil, fail(Unreachable, fmt.Errorf("HTTP %d", resp.StatusCode))
	case tooLarge:
		return nil, fail(BadDocument, fmt.Errorf("the answer is %w", err))
	}
	return body, nil
}

// decode decodes one JSON value of data into v: no trailing data.
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not a document of the v0.1 API: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("not a document of the v0.1 API: data after the JSON value")
	}
	return nil
}

// ParseRef splits NAME[@VERSION] ("io.github.owner/name@1.2.0"); the
// version is "" when none is given.
func ParseRef(ref string) (name, version string, err error) {
	name, version, _ = strings.Cut(ref, "@")
	if err := checkName(name); err != nil {
		return "", "", err
	}
	if strings.Contains(ref, "@") && (version == "" || !printable(version)) {
		return "", "", fmt.Errorf("%q: a version after \"@\" is missing or unprintable", ref)
	}
	return name, version, nil
}

// checkName checks a server's name: "namespace/name", printable, no
// spaces.
func checkName(name string) error {
	ns, n, ok := strings.Cut(name, "/")
	if !ok || ns == "" || n == "" || strings.Contains(n, "/") || !printable(name) || strings.ContainsAny(name, " @") || len(name) > 200 {
		return fmt.Errorf("server name %q: want NAMESPACE/NAME, as io.github.owner/server", name)
	}
	return nil
}

// printable reports whether s has no control character and is valid
// UTF-8.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
