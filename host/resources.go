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

// Resources returns every resource, sorted by server name, then URI.
func (h *Host) Resources() []Resource {
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

// Templates returns every resource template, sorted by server name,
// then URI template.
func (h *Host) Templates() []Template {
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
	rid, ok := resolveResource(h.snapshot(), id)
	if !ok {
		return nil, h.unknownServer(id)
	}
	conn, err := h.conn(ctx, rid.Server)
	if err != nil {
		return nil, err
	}
	res, err := conn.ReadResource(ctx, rid.Name)
	if err != nil {
		return nil, err
	}
	return &ResourceResult{ID: rid.String(), Result: res, Text: content.ResourceText(res)}, nil
}

// resolveResource resolves a resource ID or bare URI as ReadResource
// describes.
func resolveResource(snap *registry.Snapshot, id string) (names.ID, bool) {
	if server, ok := uriServer(snap, id); ok {
		return names.ID{Server: server, Name: id}, true
	}
	return snap.Resolve(id)
}

// unknownServer reports a resource ID that names no configured server.
func (h *Host) unknownServer(id string) error {
	msg := fmt.Sprintf("resource ID %q names no configured server and no server offers it as a URI; resource IDs are \"<server>:<uri>\"", id)
	server, _, _ := strings.Cut(id, ":")
	if s := registry.Suggest(server, h.config().Names()); s != "" {
		msg += fmt.Sprintf("; did you mean server %q?", s)
	}
	return fault.New(fault.CodeNotFound, "", "", errors.New(msg))
}

// Prompts returns every prompt, sorted by canonical ID.
func (h *Host) Prompts() []Prompt {
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
	snap := h.snapshot()
	p, ok := snap.Prompt(id)
	if !ok {
		if pid, ok := snap.Resolve(id); ok {
			if err := h.serverUnavailable(pid.Server); err != nil {
				return nil, err
			}
		}
		msg := fmt.Sprintf("no prompt %q", id)
		if s := registry.Suggest(id, snap.PromptNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fault.New(fault.CodeNotFound, "", "", errors.New(msg))
	}
	conn, err := h.conn(ctx, p.ID.Server)
	if err != nil {
		return nil, err
	}
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.GetPrompt(ctx, p.ID.Name, args, uopts)
	if err != nil {
		return nil, fromUpstream(err)
	}
	cleanPrompt(res)
	return &PromptResult{ID: p.ID.String(), Result: res, Text: content.PromptText(res)}, nil
}

// Complete asks the server behind a completion reference for argument
// completions. A prompt reference names a prompt by model-facing name or
// canonical ID; a resource reference names a template, routed to the server
// that offers it (the first in server-name order).
func (h *Host) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, fault.New(fault.CodeInvalidInput, "", "complete", errors.New("no reference"))
	}
	snap := h.snapshot()
	ref := *params.Ref
	server := ""
	switch ref.Type {
	case "ref/prompt":
		p, ok := snap.Prompt(ref.Name)
		if !ok {
			return nil, fault.New(fault.CodeNotFound, "", "complete", fmt.Errorf("no prompt %q", ref.Name))
		}
		server, ref.Name = p.ID.Server, p.Prompt.Name
	case "ref/resource":
		for _, t := range snap.Templates() {
			if t.Template.URITemplate == ref.URI {
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
	conn, err := h.conn(ctx, server)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Ref = &ref
	return conn.Complete(ctx, &p)
}

// Subscribe subscribes to updates of a resource URI at the server that
// lists it (or, for a URI filled in from a template, the server offering a
// template, tried in server-name order). Unsubscribe undoes it.
func (h *Host) Subscribe(ctx context.Context, uri string) (server string, err error) {
	server, err = h.resourceServer(uri)
	if err != nil {
		return "", err
	}
	conn, err := h.conn(ctx, server)
	if err != nil {
		return "", err
	}
	return server, conn.Subscribe(ctx, uri)
}

// Unsubscribe ends a subscription made with Subscribe at server.
func (h *Host) Unsubscribe(ctx context.Context, server, uri string) error {
	conn, err := h.conn(ctx, server)
	if err != nil {
		return err
	}
	return conn.Unsubscribe(ctx, uri)
}

// resourceServer finds the server of a resource URI.
func (h *Host) resourceServer(uri string) (string, error) {
	if server, ok := uriServer(h.snapshot(), uri); ok {
		return server, nil
	}
	return "", fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server offers resource %q", uri))
}

// uriServer finds the first server, in server-name order, that lists uri
// or, failing that, offers a template it matches.
func uriServer(snap *registry.Snapshot, uri string) (string, bool) {
	for _, r := range snap.Resources() {
		if r.Resource.URI == uri {
			return r.ID.Server, true
		}
	}
	for _, t := range snap.Templates() {
		if templatePrefixMatch(t.Template.URITemplate, uri) {
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
