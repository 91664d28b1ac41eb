package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/content"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/sanitize"
)

// Built-in tools: Switchboard's own tools that keep a model's context
// small (config: "context"). View.Tools lists them beside the servers'
// tools and Call runs them.
//
// The capability tools let a model discover and read resources and prompts
// on demand instead of having them put into its prompt. Each is listed only
// while at least one healthy server (one whose lists are known and that has
// not failed, see healthy) declares the capability: the resource tools
// share one gate (a server with only templates gets both discovery and
// reading), the prompt tools another.
//
// Discovery answers with opaque IDs, "<server>:<uri>", "<server>:<uri
// template>" and "<server>:<prompt>", to be passed back verbatim: reading
// strips exactly one server layer (the longest configured server name), so
// IDs of a Switchboard behind a Switchboard nest. A template keeps its raw
// RFC 6570 pattern: fill its variables in the template's ID and read that.
//
// tool_search is listed while some server's tools are deferred (context
// deferTools), with tool_describe (one tool's full definition) and
// tool_servers (the view's servers, a line each): deferred tools are not
// listed until a search finds them, and then they are, for the rest of the
// host's life. tool_search's description names the view's servers, and
// its answer gives each tool found once, compactly. Each view (see View)
// has its own: it searches the view's tools, and what it finds is listed
// for the views of the same profile only. A deferred tool is callable by
// its exact name without a search.
//
// Each built-in reaches only its caller's view: its lists, reads and
// searches leave out every server outside it.
const (
	ToolSearch        = "tool_search"
	DescribeTool      = "tool_describe"
	ListServersTool   = "tool_servers"
	ListResources     = "mcp_list_resources"
	ListTemplates     = "mcp_list_resource_templates"
	ReadResourceTool  = "mcp_read_resource"
	ListPrompts       = "mcp_list_prompts"
	GetPromptTool     = "mcp_get_prompt"
	builtinPageSize   = 50
	maxSearchResults  = 20
	defaultSearchHits = 5
	// maxFound caps the deferred tools listed because a search found them;
	// a found set is shared by the callers of one profile (the gateway has
	// one tool list for all the clients of a profile).
	maxFound = 32
)

// builtin is one built-in tool.
type builtin struct {
	tool Tool
	run  func(v *View, ctx context.Context, args json.RawMessage, opts *CallOptions) (json.RawMessage, error)
}

// obj is a JSON Schema object with the given properties.
func obj(required []string, props string) json.RawMessage {
	req := ""
	if len(required) > 0 {
		b, _ := json.Marshal(required)
		req = `,"required":` + string(b)
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `}` + req + `,"additionalProperties":false}`)
}

const (
	propServer = `"server":{"type":"string","description":"Only this server's entries (a server name as given in the entries)."}`
	propCursor = `"cursor":{"type":"string","description":"The nextCursor of the previous page, verbatim."}`
)

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

var builtins = []*builtin{
	{tool: Tool{Name: ToolSearch, Title: "Search tools",
		Description: searchDescription(""),
		InputSchema: obj([]string{"query"}, `"query":{"type":"string","description":"What the tool should do."},`+
			`"k":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)."},`+
			`"server":{"type":"string","description":"Only this server's tools."}`)},
		run: (*View).runSearch},
	{tool: Tool{Name: DescribeTool, Title: "Describe a tool",
		Description: "Give one tool's full definition, its input schema with every parameter's description, by the name " + ToolSearch + " gave.",
		InputSchema: obj([]string{"name"}, `"name":{"type":"string","description":"The tool's name."}`)},
		run: (*View).runDescribe},
	{tool: Tool{Name: ListServersTool, Title: "List servers",
		Description: "List the servers whose tools " + ToolSearch + " searches, a line each: what the server is for and how many tools it has.",
		InputSchema: obj(nil, "")},
		run: (*View).runListServers},
	{tool: Tool{Name: ListResources, Title: "List resources",
		Description: "List the resources (files, records, documents) the connected servers offer, a page at a time. " +
			"Pass an entry's id to " + ReadResourceTool + " to read it.",
		InputSchema: obj(nil, propServer+","+propCursor)},
		run: (*View).runListResources},
	{tool: Tool{Name: ListTemplates, Title: "List resource templates",
		Description: "List the resource templates (families of resources, RFC 6570 URI templates such as file:///{path}) the connected servers offer. " +
			"To read one, fill in the {variables} in the entry's id and pass the result to " + ReadResourceTool + ".",
		InputSchema: obj(nil, propServer+","+propCursor)},
		run: (*View).runListTemplates},
	{tool: Tool{Name: ReadResourceTool, Title: "Read a resource",
		Description: "Read a resource by the id " + ListResources + " gave (or a filled-in template id), or a stored large result by the id its preview names. " +
			"Long content comes in pages: pass nextCursor back to continue.",
		InputSchema: obj([]string{"id"}, `"id":{"type":"string","description":"The resource's id, verbatim."},`+propCursor)},
		run: (*View).runReadResource},
	{tool: Tool{Name: ListPrompts, Title: "List prompts",
		Description: "List the prompt templates the connected servers offer, with their arguments. Render one with " + GetPromptTool + ".",
		InputSchema: obj(nil, propServer+","+propCursor)},
		run: (*View).runListPrompts},
	{tool: Tool{Name: GetPromptTool, Title: "Get a prompt",
		Description: "Render a prompt by the id " + ListPrompts + " gave, with its arguments.",
		InputSchema: obj([]string{"id"}, `"id":{"type":"string","description":"The prompt's id, verbatim."},`+
			`"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"The prompt's arguments by name."}`)},
		run: (*View).runGetPrompt},
}

func init() {
	for _, b := range builtins {
		b.tool.ID, b.tool.Annotations = b.tool.Name, readOnly
	}
}

// gates reports which groups of built-in tools are on in a view: the
// capability tools while a healthy server of the view (see
// serverView.healthy) declares the capability or lists entries,
// tool_search while a server of the view defers its tools (or the view is
// over its budget, budget.go).
func (h *Host) gates(v *View) (resources, prompts, search bool) {
	comp := h.comp.Load()
	cx := comp.cfg.Context
	sc := v.scope()
	over := h.overBudget(v, comp.cfg, h.snapshot())
	for _, c := range comp.cfg.Servers {
		if !sc.hasServer(c.Name) {
			continue
		}
		if c.Enabled && (cx.Deferred(c) || over && c.DeferTools == nil) {
			search = true
		}
		if cx.NoCapabilityTools {
			continue
		}
		sv := comp.servers[c.Name].view()
		if !sv.healthy() {
			continue
		}
		caps := sv.caps
		if (caps != nil && caps.Resources != nil) || len(sv.catalog.Resources)+len(sv.catalog.Templates) > 0 {
			resources = true
		}
		if (caps != nil && caps.Prompts != nil) || len(sv.catalog.Prompts) > 0 {
			prompts = true
		}
	}
	return resources, prompts, search
}

// activeBuiltins returns the built-in tools that are on now in a view.
// mcp_read_resource is also on once a result was spilled, whatever the
// gates and "capabilityTools" say: it is how the rest is read.
func (h *Host) activeBuiltins(v *View) []*builtin {
	resources, prompts, search := h.gates(v)
	spilled := h.spilled.Load()
	sc := v.scope()
	var out []*builtin
	for _, b := range builtins {
		if !sc.hasBuiltin(b.tool.Name) {
			continue
		}
		switch b.tool.Name {
		case ToolSearch, DescribeTool, ListServersTool:
			if !search {
				continue
			}
		case CodeTool:
			if !h.codeOn() {
				continue
			}
		case ListPrompts, GetPromptTool:
			if !prompts {
				continue
			}
		case ReadResourceTool:
			if !resources && !spilled {
				continue
			}
		case AccountsTool:
			if !h.accountsOn(v) {
				continue
			}
		default:
			if !resources {
				continue
			}
		}
		out = append(out, b)
	}
	return append(out, h.storedScripts()...)
}

// lookupBuiltin returns the built-in tool called name if it is on in v.
func (h *Host) lookupBuiltin(v *View, name string) *builtin {
	if !isBuiltinName(name) && !strings.HasPrefix(name, ScriptPrefix) {
		return nil
	}
	for _, b := range h.activeBuiltins(v) {
		if b.tool.Name == name {
			return b
		}
	}
	return nil
}

func isBuiltinName(name string) bool {
	return slices.ContainsFunc(builtins, func(b *builtin) bool { return b.tool.Name == name })
}

// modelTools is View.Tools.
func (h *Host) modelTools(v *View) []Tool {
	active := h.activeBuiltins(v)
	snap, cfg := h.snapshot(), h.config()
	cx := cfg.Context
	sc := v.scope()
	over := h.overBudget(v, cfg, snap)
	var listed []*registry.Tool
	h.mu.RLock()
	found := h.found[v.c.Profile]
	for _, t := range snap.Tools() {
		if !sc.hasTool(t) || h.deferredLocked(cfg, t, found, over) || slices.ContainsFunc(active, func(b *builtin) bool { return b.tool.Name == t.Name }) {
			continue
		}
		listed = append(listed, t)
	}
	h.mu.RUnlock()
	out := make([]Tool, 0, len(listed)+len(active))
	for _, t := range listed {
		tool := toolOf(t)
		if cx.OutputSchemaHint {
			tool.Description = withOutputHint(tool.Description, tool.OutputSchema)
		}
		out = append(out, tool)
	}
	for _, b := range active {
		tool := b.tool
		switch tool.Name {
		case ToolSearch:
			tool.Description = searchDescription(h.serverSummary(v, maxSummaryServers))
		case CodeTool:
			tool.Description = h.codeDescription(v)
		}
		out = append(out, tool)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// deferredLocked reports whether t is left out of a model's tools: its
// server's tools are deferred (or the view is overBudget, budget.go), no
// alwaysInclude glob keeps it and the view's search did not find it
// (found) under cfg. Called with h.mu held
// (it guards the found sets).
func (h *Host) deferredLocked(cfg *config.Config, t *registry.Tool, found []string, overBudget bool) bool {
	cx := cfg.Context
	deferred := cx.Deferred(cfg.Server(t.ID.Server)) || overBudget && budgetDefers(cfg, t.ID.Server)
	if !deferred || slices.Contains(found, t.Name) {
		return false
	}
	for _, g := range cx.AlwaysInclude {
		if ok, _ := path.Match(g, t.Name); ok {
			return false
		}
	}
	return true
}

// callBuiltin runs a built-in tool.
func (h *Host) callBuiltin(ctx context.Context, v *View, b *builtin, args json.RawMessage, opts *CallOptions) (*Result, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if !isObject(args) {
		return nil, fault.New(fault.CodeInvalidInput, "", b.tool.Name, errors.New("arguments must be a JSON object"))
	}
	raw, err := b.run(v, ctx, args, opts)
	if err != nil {
		return nil, err
	}
	out := &Result{Tool: b.tool.Name, Raw: raw, IsError: isErrorResult(raw)}
	if opts == nil || !opts.RawOnly {
		out.Text = content.ToolText(raw)
	}
	return out, nil
}

// decodeArgs decodes a built-in tool's arguments strictly.
func decodeArgs(tool string, args json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fault.New(fault.CodeInvalidInput, "", tool, fmt.Errorf("arguments: %v", err))
	}
	return nil
}

// jsonResult is a tool result whose text is v as JSON, also given as
// structuredContent.
func jsonResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": string(b)}},
		"structuredContent": json.RawMessage(b),
	})
}

// cursor is a keyset cursor: the last ID of the previous page.
func encodeCursor(lastID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after\x00" + lastID))
}

func decodeCursor(tool, c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	after, ok := strings.CutPrefix(string(b), "after\x00")
	if err != nil || !ok {
		return "", fault.New(fault.CodeInvalidInput, "", tool, errors.New(`"cursor" is not one this tool gave: pass nextCursor back verbatim`))
	}
	return after, nil
}

type listArgs struct {
	Server string `json:"server"`
	Cursor string `json:"cursor"`
}

// page selects the entries of one page, in ID order: it starts after the
// cursor's ID and holds at most builtinPageSize entries, so that an entry
// added or removed between pages moves no other.
func page[T any](tool string, a listArgs, entries []T, id, server func(T) string) (out []T, next string, err error) {
	after, err := decodeCursor(tool, a.Cursor)
	if err != nil {
		return nil, "", err
	}
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(x, y T) int { return strings.Compare(id(x), id(y)) })
	out = []T{}
	for _, e := range entries {
		if (a.Server != "" && server(e) != a.Server) || (after != "" && id(e) <= after) {
			continue
		}
		if len(out) == builtinPageSize {
			return out, encodeCursor(id(out[len(out)-1])), nil
		}
		out = append(out, e)
	}
	return out, "", nil
}

// checkServerArg fails for a server filter that names no server of the
// view, or one that cannot take requests now (without a request).
func (v *View) checkServerArg(tool, name string) error {
	if name == "" {
		return nil
	}
	if err := v.knownServer(tool, name); err != nil {
		return err
	}
	return v.h.reachable(tool, name)
}

// knownServer says that the view has no server called name, with the
// closest it has.
func (v *View) knownServer(tool, name string) error {
	known := v.servers()
	if slices.Contains(known, name) {
		return nil
	}
	msg := fmt.Sprintf("no server %q", name)
	if s := registry.Suggest(name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return fault.New(fault.CodeInvalidInput, "", tool, errors.New(msg))
}

// healthyServers returns the names of the servers whose entries are shown.
func (h *Host) healthyServers() map[string]bool {
	out := map[string]bool{}
	for name, s := range h.comp.Load().servers {
		if v := s.view(); v.healthy() {
			out[name] = true
		}
	}
	return out
}

// listEntries answers a capability tool's list: the entries of healthy
// servers (only server's, when the arguments name one) of the view (all
// holds the view's entries only), a page at a time, under key.
func listEntries[T any](v *View, tool string, args json.RawMessage, all []T, key string, id, server func(T) string) (json.RawMessage, error) {
	var a listArgs
	if err := decodeArgs(tool, args, &a); err != nil {
		return nil, err
	}
	if err := v.checkServerArg(tool, a.Server); err != nil {
		return nil, err
	}
	ok := v.h.healthyServers()
	var shown []T
	for _, e := range all {
		if ok[server(e)] {
			shown = append(shown, e)
		}
	}
	p, next, err := page(tool, a, shown, id, server)
	if err != nil {
		return nil, err
	}
	out := map[string]any{key: p}
	if next != "" {
		out["nextCursor"] = next
	}
	return jsonResult(out)
}

func (v *View) runListResources(_ context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	return listEntries(v, ListResources, args, v.Resources(), "resources",
		func(r Resource) string { return r.ID }, func(r Resource) string { return r.Server })
}

func (v *View) runListTemplates(_ context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	return listEntries(v, ListTemplates, args, v.Templates(), "resourceTemplates",
		func(t Template) string { return t.ID }, func(t Template) string { return t.Server })
}

// promptEntry is a prompt as mcp_list_prompts shows it.
type promptEntry struct {
	ID          string                `json:"id"`
	Server      string                `json:"server"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []*mcp.PromptArgument `json:"arguments,omitempty"`
}

func (v *View) runListPrompts(_ context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	var all []promptEntry
	for _, p := range v.Prompts() {
		all = append(all, promptEntry{p.ID, p.Server, p.Title, p.Description, p.Arguments})
	}
	return listEntries(v, ListPrompts, args, all, "prompts",
		func(e promptEntry) string { return e.ID }, func(e promptEntry) string { return e.Server })
}

// reachable fails, without any network request, when the server an ID
// names cannot take requests now: disabled, failed, backing off or closed.
func (h *Host) reachable(tool, server string) error {
	var st State
	if s := h.comp.Load().servers[server]; s != nil {
		st = s.currentState()
	}
	switch st {
	case StateFailed, StateBackoff, StateDisabled, StateClosed:
		return fault.New(fault.CodeUnavailable, server, tool, fmt.Errorf("the server is %s", st))
	}
	return h.serverUnavailable(server)
}

func (v *View) runReadResource(ctx context.Context, args json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	h := v.h
	var a struct {
		ID     string `json:"id"`
		Cursor string `json:"cursor"`
	}
	if err := decodeArgs(ReadResourceTool, args, &a); err != nil {
		return nil, err
	}
	if a.ID == "" {
		return nil, fault.New(fault.CodeInvalidInput, "", ReadResourceTool, errors.New(`"id" is empty`))
	}
	if isSpillID(a.ID) && (h.spills.has(a.ID) || h.config().Server(strings.TrimSuffix(spillPrefix, ":spill/")) == nil) {
		return h.spills.read(a.ID, a.Cursor)
	}
	if a.Cursor != "" {
		return nil, fault.New(fault.CodeInvalidInput, "", ReadResourceTool, errors.New(`"cursor" is only for the pages of a stored large result or of a long resource: pass nextCursor back with the id it came with`))
	}
	rid, ok := v.resolveResource(a.ID)
	if !ok {
		return nil, v.unknownServer(a.ID)
	}
	return h.serverRead(ctx, rid.Server, "resources/read", args, opts, func(ctx context.Context) (json.RawMessage, error) {
		res, err := v.ReadResource(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		raw, err := resourceAsToolResult(res.Result)
		if err != nil {
			return nil, fault.New(fault.CodeServerError, rid.Server, ReadResourceTool, err)
		}
		return raw, nil
	})
}

// serverRead makes a built-in tool's request to a server: it fails at
// once for a server that cannot take requests, applies the policy (see
// authorizeRead), makes the request, guards the answer like a tool result
// (credentials redacted, a long one spilled) and records the call in the audit log as
// "<server>:<method>".
func (h *Host) serverRead(ctx context.Context, server, method string, args json.RawMessage, opts *CallOptions, do func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	if err := h.reachable(method, server); err != nil {
		return nil, err
	}
	sc := h.config().Server(server)
	if sc == nil {
		return nil, fault.New(fault.CodeNotFound, server, method, errors.New("the server is no longer configured"))
	}
	if err := h.authorizeRead(ctx, sc, method, args, opts); err != nil {
		return nil, err
	}
	start := time.Now()
	raw, err := do(ctx)
	var secrets []SecretDecision
	if err == nil {
		h.markRead(ctx, sc, method, opts)
		raw, secrets = h.screenResult(sc, method, raw)
		raw, err = h.guardAndSpill(sc, method, raw, true, false)
	}
	if h.audit.on() {
		var res *Result
		if err == nil {
			res = &Result{Raw: raw, secrets: secrets}
		}
		rec := callRecord(server, names.ID{Server: server, Name: method}.String(), true, opts, args, start, res, err)
		h.audit.record(auditRow(&rec, args))
	}
	return raw, err
}

// resourceAsToolResult turns read contents into tool-result content: text
// as text blocks, blobs as embedded resources.
func resourceAsToolResult(res *mcp.ReadResourceResult) (json.RawMessage, error) {
	blocks := []any{}
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if c.Blob == nil {
			blocks = append(blocks, map[string]any{"type": "text", "text": c.Text})
			continue
		}
		blocks = append(blocks, map[string]any{"type": "resource", "resource": c})
	}
	return json.Marshal(map[string]any{"content": blocks})
}

func (v *View) runGetPrompt(ctx context.Context, args json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	h := v.h
	var a struct {
		ID        string            `json:"id"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := decodeArgs(GetPromptTool, args, &a); err != nil {
		return nil, err
	}
	if a.ID == "" {
		return nil, fault.New(fault.CodeInvalidInput, "", GetPromptTool, errors.New(`"id" is empty`))
	}
	snap := h.snapshot()
	p, ok := v.prompt(snap, a.ID)
	if !ok {
		// Let GetPrompt explain: no such prompt, or its server is down.
		if pid, ok := snap.Resolve(a.ID); ok && v.scope().hasServer(pid.Server) {
			if err := h.reachable(GetPromptTool, pid.Server); err != nil {
				return nil, err
			}
		}
		_, err := h.getPrompt(ctx, v, a.ID, a.Arguments, opts)
		return nil, err
	}
	return h.serverRead(ctx, p.ID.Server, "prompts/get", args, opts, func(ctx context.Context) (json.RawMessage, error) {
		res, err := h.getPrompt(ctx, v, a.ID, a.Arguments, opts)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": res.Text}}})
	})
}

// withOutputHint appends an "expected output" hint built from a tool's
// output schema to its description, within config.MaxOutputSchemaHint
// bytes: the schema itself when it fits, else its top-level properties
// with their types, else as many of them as fit.
func withOutputHint(desc string, schema json.RawMessage) string {
	if len(schema) == 0 {
		return desc
	}
	const lead = "\n\nExpected output (JSON): "
	budget := config.MaxOutputSchemaHint - len(lead)
	schema = cleanJSON(schema)
	if schema == nil {
		return desc
	}
	var hint string
	if len(schema) <= budget {
		hint = string(schema)
	} else {
		hint = propertySummary(schema, budget)
	}
	// The schema is the server's text: cleaned like a description, and
	// left out if it reads like an injection.
	hint, _ = sanitize.Strip(hint)
	if hint == "" || len(sanitize.Scan(hint, nil)) > 0 {
		return desc
	}
	return desc + lead + hint
}

// cleanJSON returns raw compacted, with invisible and control characters
// stripped from every string and key (escaped ones included), or nil if
// raw does not decode.
func cleanJSON(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var clean func(any) any
	clean = func(v any) any {
		switch x := v.(type) {
		case string:
			s, _ := sanitize.Strip(x)
			return s
		case []any:
			for i := range x {
				x[i] = clean(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				ck, _ := sanitize.Strip(k)
				out[ck] = clean(e)
			}
			return out
		}
		return v
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(clean(v)) != nil {
		return nil
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}

// propertySummary describes an object schema's top-level properties and
// their types within budget bytes, or returns "".
func propertySummary(schema json.RawMessage, budget int) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return ""
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("an object with ")
	for i, k := range keys {
		part := k
		if t, ok := s.Properties[k].Type.(string); ok {
			part += " (" + t + ")"
		}
		if i > 0 {
			part = ", " + part
		}
		if b.Len()+len(part)+len(", …") > budget {
			if i == 0 {
				b.WriteString("…")
			} else {
				b.WriteString(", …")
			}
			break
		}
		b.WriteString(part)
	}
	return b.String()
}
