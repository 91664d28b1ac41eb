package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Contents is what a resource read returns: Text, or Blob for binary
// data, with a MIME type (default: the resource's, else text/plain).
type Contents struct {
	Text     string
	Blob     []byte
	MIMEType string
	Meta     mcp.Meta
}

// Resource describes a resource at a fixed URI.
type Resource struct {
	URI         string // absolute, required
	Name        string // required
	Title       string
	Description string
	// MIMEType of the contents; default text/plain.
	MIMEType    string
	Size        int64
	Annotations *mcp.Annotations
	// Cache overrides the server's ReadCache for this resource.
	Cache *Cache
	Meta  mcp.Meta
}

// ResourceHandler reads a fixed resource. Returning nil contents means
// there is nothing there: the client gets "resource not found".
type ResourceHandler func(ctx context.Context) (*Contents, error)

// ResourceTemplate describes a family of resources.
type ResourceTemplate struct {
	// URITemplate uses the two supported RFC 6570 forms: {var} (one path
	// segment, percent-decoded) and {+var} (greedy, "/" included, not
	// decoded). Required.
	URITemplate string
	Name        string // required
	Title       string
	Description string
	// MIMEType of the contents; default text/plain.
	MIMEType    string
	Annotations *mcp.Annotations
	// Cache overrides the server's ReadCache for this family.
	Cache *Cache
	Meta  mcp.Meta
}

// TemplateHandler reads one resource of a template. vars holds the URI's
// variables, converted to the types of V's fields and validated (a
// failure is invalid params, -32602, and the handler is not called).
// uri is the URI read. Returning nil contents means not found.
type TemplateHandler[V any] func(ctx context.Context, uri string, vars V) (*Contents, error)

type resourceEntry struct {
	uri      string
	mimeType string
	cache    *Cache
	h        ResourceHandler
}

type templateEntry struct {
	t        *uriTemplate
	mimeType string
	cache    *Cache
	read     func(ctx context.Context, uri string, vars map[string]string) (*Contents, error)
}

// AddResource registers a fixed resource, replacing any at the same URI.
// A fixed resource always wins over a template that also matches its URI.
func (s *Server) AddResource(r Resource, h ResourceHandler) error {
	if h == nil {
		return fmt.Errorf("resource %q: nil handler", r.URI)
	}
	u, err := url.Parse(r.URI)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("resource %q: URI must be absolute", r.URI)
	}
	if r.Name == "" {
		return fmt.Errorf("resource %q: no name", r.URI)
	}
	if r.MIMEType == "" {
		r.MIMEType = "text/plain"
	}
	e := &resourceEntry{uri: r.URI, mimeType: r.MIMEType, cache: r.Cache, h: h}
	s.mu.Lock()
	s.resources[r.URI] = e
	s.mu.Unlock()
	return register(func() {
		s.mcp.AddResource(&mcp.Resource{
			URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
			MIMEType: r.MIMEType, Size: r.Size, Annotations: r.Annotations, Meta: r.Meta,
		}, unreachableRead)
	})
}

// unreachableRead is what go-sdk holds as the handler of our resources:
// resources/read is served by Server.read in the middleware.
func unreachableRead(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, mcp.ResourceNotFoundError(req.Params.URI)
}

// RemoveResources removes the fixed resources at the given URIs.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	for _, u := range uris {
		delete(s.resources, u)
	}
	s.mu.Unlock()
	s.mcp.RemoveResources(uris...)
}

// RemoveTemplates removes the resource templates with the given URI
// templates.
func (s *Server) RemoveTemplates(uriTemplates ...string) {
	s.mu.Lock()
	s.templates = slices.DeleteFunc(s.templates, func(e *templateEntry) bool {
		return slices.Contains(uriTemplates, e.t.raw)
	})
	s.mu.Unlock()
	s.mcp.RemoveResourceTemplates(uriTemplates...)
}

// AddTemplate registers a resource template, replacing any with the same
// URI template. V is the variables' type: usually a struct whose json
// field names are the template's variables (map[string]string takes them
// as they are). It returns an error, and registers nothing, for a
// template with an unsupported form ({?q}, {#f}, {/p*}, …), a variable V
// has no field for, or a V whose schema cannot be inferred.
//
// When several templates match a URI, the one with fewer {+var} and then
// more literal text wins; fixed resources win over all.
func AddTemplate[V any](s *Server, rt ResourceTemplate, h TemplateHandler[V]) error {
	if h == nil {
		return fmt.Errorf("template %q: nil handler", rt.URITemplate)
	}
	t, err := parseTemplate(rt.URITemplate)
	if err != nil {
		return err
	}
	if rt.Name == "" {
		return fmt.Errorf("template %q: no name", rt.URITemplate)
	}
	schema, err := schemaFor(reflect.TypeFor[V]())
	if err != nil {
		return fmt.Errorf("template %q: variables type: %w", rt.URITemplate, err)
	}
	if schemaType(schema) != "object" {
		return fmt.Errorf("template %q: variables type %v is not a struct or map", rt.URITemplate, reflect.TypeFor[V]())
	}
	if schema.Properties != nil {
		for _, v := range t.vars {
			if schema.Properties[v] == nil {
				return fmt.Errorf("template %q: %v has no field for variable %q", rt.URITemplate, reflect.TypeFor[V](), v)
			}
		}
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("template %q: variables schema: %w", rt.URITemplate, err)
	}
	if rt.MIMEType == "" {
		rt.MIMEType = "text/plain"
	}
	e := &templateEntry{t: t, mimeType: rt.MIMEType, cache: rt.Cache}
	e.read = func(ctx context.Context, uri string, raw map[string]string) (*Contents, error) {
		obj, err := stringArgs(schema, raw)
		if err != nil {
			return nil, InvalidParams("invalid URI %q for template %q: %v", uri, rt.URITemplate, err)
		}
		vars, err := decodeInto[V](rs, obj)
		if err != nil {
			return nil, InvalidParams("invalid URI %q for template %q: %v", uri, rt.URITemplate, err)
		}
		return h(ctx, uri, vars)
	}
	if err := register(func() {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: rt.URITemplate, Name: rt.Name, Title: rt.Title, Description: rt.Description,
			MIMEType: rt.MIMEType, Annotations: rt.Annotations, Meta: rt.Meta,
		}, unreachableRead)
	}); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.templates = slices.DeleteFunc(s.templates, func(x *templateEntry) bool { return x.t.raw == t.raw })
	i := 0
	for i < len(s.templates) && !moreSpecific(t, s.templates[i].t) {
		i++
	}
	s.templates = slices.Insert(s.templates, i, e)
	return nil
}

// read serves resources/read: fixed resources first, then templates.
func (s *Server) read(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, err error) {
	uri := req.Params.URI
	defer s.recovered(ctx, "resource", uri, &err)
	var (
		read     func() (*Contents, error)
		mimeType string
		cache    *Cache
	)
	s.mu.Lock()
	if r, ok := s.resources[uri]; ok {
		read, mimeType, cache = func() (*Contents, error) { return r.h(ctx) }, r.mimeType, r.cache
	} else {
		for _, t := range s.templates {
			if vars, ok := t.t.match(uri); ok {
				read, mimeType, cache = func() (*Contents, error) { return t.read(ctx, uri, vars) }, t.mimeType, t.cache
				break
			}
		}
	}
	s.mu.Unlock()
	if read == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	c, err := read()
	if err != nil {
		if !isProtocolError(err) && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
			err = Internal(err, "reading %s failed", uri)
		}
		logError(ctx, s.logger, "resource", uri, err)
		return nil, err
	}
	if c == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if c.MIMEType != "" {
		mimeType = c.MIMEType
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: mimeType, Meta: c.Meta}
	if c.Blob != nil {
		rc.Blob = c.Blob
	} else {
		rc.Text = c.Text
	}
	res = readResult(IsModern(ctx))
	res.Contents = []*mcp.ResourceContents{rc}
	if cache == nil {
		cache = s.opts.ReadCache
	}
	cache.apply(&res.Cacheable)
	return res, nil
}

// readResult returns an empty resources/read result, marked "complete"
// (resultType, which the 2026-07-28 schema requires of every result) when
// modern. go-sdk marks the results of its own read handlers, but this
// package answers resources/read itself, and go-sdk keeps the field
// unexported: its UnmarshalJSON is the one way to set it.
func readResult(modern bool) *mcp.ReadResourceResult {
	res := &mcp.ReadResourceResult{}
	if modern {
		if err := json.Unmarshal([]byte(`{"resultType":"complete"}`), res); err != nil {
			panic("server: go-sdk rejects a complete resources/read result: " + err.Error())
		}
	}
	return res
}
