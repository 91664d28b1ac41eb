package host

// Resources, templates and prompts: listing them, reading and rendering
// them through their servers, completions and subscriptions.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/content"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// resources returns every resource, sorted by server name, then URI.
func (h *Host) resources() []Resource {
	snap := h.snapshot()
	out := make([]Resource, 0, len(snap.Resources()))
	for _, r := range snap.Resources() {
		out = append(out, Resource{
			ID: r.ID.String(), Server: r.ID.Server, URI: r.Resource.URI, Name: r.Resource.Name,
			Title: r.Resource.Title, Description: r.Resource.Description, MIMEType: r.Resource.MIMEType, Size: r.Resource.Size,
		})
	}
	return out
}

// templates returns every resource template, sorted by server name,
// then URI template.
func (h *Host) templates() []Template {
	snap := h.snapshot()
	out := make([]Template, 0, len(snap.Templates()))
	for _, t := range snap.Templates() {
		out = append(out, Template{
			ID: t.ID.String(), Server: t.ID.Server, URITemplate: t.Template.URITemplate, Name: t.Template.Name,
			Title: t.Template.Title, Description: t.Template.Description, MIMEType: t.Template.MIMEType,
		})
	}
	return out
}

// ReadResource reads a resource by canonical ID ("<server>:<uri>") or by
// bare URI. A string equal to a listed resource URI, or matching a
// resource template, is a URI, read from the first server in server-name
// order that offers it (so "memory://x" is a URI even with a server named
// "memory"); anything else is parsed as a canonical ID. The URI of an ID
// need not be listed: a URI filled in from one of the server's templates
// is read the same way.
func (h *Host) ReadResource(ctx context.Context, id string) (*ResourceResult, error) {
	return h.readResource(ctx, h.View(Caller{}), id)
}

// readResource is ReadResource within a view.
func (h *Host) readResource(ctx context.Context, v *View, id string) (*ResourceResult, error) {
	rid, ok := v.resolveResource(id)
	if !ok {
		return nil, v.unknownServer(id)
	}
	conn, done, err := h.viewConn(ctx, v, rid.Server)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := conn.ReadResource(ctx, rid.Name)
	if err != nil {
		return nil, err
	}
	return &ResourceResult{ID: rid.String(), Result: res, Text: content.ResourceText(res)}, nil
}

// resolveResource resolves a resource ID or bare URI as ReadResource
// describes, among the view's servers.
func (v *View) resolveResource(id string) (names.ID, bool) {
	snap, sc := v.h.snapshot(), v.scope()
	if server, ok := uriServer(snap, id, sc.hasServer); ok {
		return names.ID{Server: server, Name: id}, true
	}
	rid, ok := snap.Resolve(id)
	return rid, ok && sc.hasServer(rid.Server)
}

// unknownServer reports a resource ID that names no server of the view.
func (v *View) unknownServer(id string) error {
	msg := fmt.Sprintf("resource ID %q names no configured server and no server offers it as a URI; resource IDs are \"<server>:<uri>\"", id)
	server, _, _ := strings.Cut(id, ":")
	if s := registry.Suggest(server, v.servers()); s != "" {
		msg += fmt.Sprintf("; did you mean server %q?", s)
	}
	return fault.New(fault.CodeNotFound, "", "", errors.New(msg))
}

// prompts returns every prompt, sorted by canonical ID.
func (h *Host) prompts() []Prompt {
	snap := h.snapshot()
	out := make([]Prompt, 0, len(snap.Prompts()))
	for _, p := range snap.Prompts() {
		out = append(out, Prompt{
			ID: p.ID.String(), ModelName: p.Name, Server: p.ID.Server, Name: p.Prompt.Name, Title: p.Prompt.Title,
			Description: p.Prompt.Description, Arguments: p.Prompt.Arguments,
		})
	}
	return out
}

// GetPrompt renders a prompt, by canonical ID ("<server>:<prompt>") or
// model-facing name, with the given arguments. opts (may be nil) carries a
// Peer and input responses as for Call; Progress is not used.
func (h *Host) GetPrompt(ctx context.Context, id string, args map[string]string, opts *CallOptions) (*PromptResult, error) {
	return h.getPrompt(ctx, h.viewOf(opts), id, args, opts)
}

// prompt finds a prompt of the view by model-facing name or canonical ID.
func (v *View) prompt(snap *registry.Snapshot, id string) (*registry.Prompt, bool) {
	p, ok := snap.Prompt(id)
	return p, ok && v.scope().hasServer(p.ID.Server)
}

// getPrompt is GetPrompt within a view.
func (h *Host) getPrompt(ctx context.Context, v *View, id string, args map[string]string, opts *CallOptions) (*PromptResult, error) {
	snap, sc := h.snapshot(), v.scope()
	p, ok := v.prompt(snap, id)
	if !ok {
		if pid, ok := snap.Resolve(id); ok && sc.hasServer(pid.Server) {
			if err := h.serverUnavailable(pid.Server); err != nil {
				return nil, err
			}
		}
		var known []string
		for _, p := range snap.Prompts() {
			if sc.hasServer(p.ID.Server) {
				known = append(known, p.ID.String())
			}
		}
		msg := fmt.Sprintf("no prompt %q", id)
		if s := registry.Suggest(id, known); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fault.New(fault.CodeNotFound, "", "", errors.New(msg))
	}
	conn, done, err := h.viewConn(ctx, v, p.ID.Server)
	if err != nil {
		return nil, err
	}
	defer done()
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.GetPrompt(ctx, p.ID.Name, args, uopts)
	if err != nil {
		return nil, fromUpstream(err)
	}
	cleanPrompt(res)
	return &PromptResult{ID: p.ID.String(), Result: res, Text: content.PromptText(res)}, nil
}

// complete is View.Complete.
func (h *Host) complete(ctx context.Context, v *View, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, fault.New(fault.CodeInvalidInput, "", "complete", errors.New("no reference"))
	}
	snap, sc := h.snapshot(), v.scope()
	ref := *params.Ref
	server := ""
	switch ref.Type {
	case "ref/prompt":
		p, ok := v.prompt(snap, ref.Name)
		if !ok {
			return nil, fault.New(fault.CodeNotFound, "", "complete", fmt.Errorf("no prompt %q", ref.Name))
		}
		server, ref.Name = p.ID.Server, p.Prompt.Name
	case "ref/resource":
		for _, t := range snap.Templates() {
			if t.Template.URITemplate == ref.URI && sc.hasServer(t.ID.Server) {
				server = t.ID.Server
				break
			}
		}
		if server == "" {
			return nil, fault.New(fault.CodeNotFound, "", "complete", fmt.Errorf("no resource template %q", ref.URI))
		}
	default:
		return nil, fault.New(fault.CodeInvalidInput, "", "complete", fmt.Errorf("unknown reference type %q", ref.Type))
	}
	conn, done, err := h.viewConn(ctx, v, server)
	if err != nil {
		return nil, err
	}
	defer done()
	p := *params
	p.Ref = &ref
	return conn.Complete(ctx, &p)
}

// uriServer finds the first server, in server-name order, among those in
// reports true for, that lists uri or, failing that, offers a template it
// matches.
func uriServer(snap *registry.Snapshot, uri string, in func(server string) bool) (string, bool) {
	for _, r := range snap.Resources() {
		if r.Resource.URI == uri && in(r.ID.Server) {
			return r.ID.Server, true
		}
	}
	for _, t := range snap.Templates() {
		if templatePrefixMatch(t.Template.URITemplate, uri) && in(t.ID.Server) {
			return t.ID.Server, true
		}
	}
	return "", false
}

// templatePrefixMatch is a conservative match of a URI against an RFC 6570
// template: the literal text before the first expression must prefix it.
func templatePrefixMatch(tmpl, uri string) bool {
	lit, _, _ := strings.Cut(tmpl, "{")
	return lit != "" && strings.HasPrefix(uri, lit)
}
