package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func conformanceClientCommand(*run) *command {
	return &command{
		name: "conformance-client", args: "SERVER-URL", hidden: true,
		summary: "the client side of the MCP conformance suite, on the host package",
		run:     runConformanceClient,
	}
}

// runConformanceClient is the client side of the official MCP conformance
// suite, built on the host package as an agent author would use it. The
// suite runs `switchboard conformance-client <server-url>` with the
// scenario in MCP_CONFORMANCE_SCENARIO (and data in MCP_CONFORMANCE_CONTEXT)
// and scores what its mock server observed. The server is configured with
// pass-through names, so the suite's tool names are the model-facing ones.
func runConformanceClient(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	scenario, _ := r.env.LookupEnv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if raw, ok := r.env.LookupEnv("MCP_CONFORMANCE_CONTEXT"); ok && raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			return r.usagef("conformance-client: MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	server := map[string]any{"type": "http", "url": r.args[0], "prefix": "", "startupTimeoutMs": 20000, "callTimeoutMs": 20000,
		// The suite's test server runs on loopback and asks for sampling.
		"trust": "trusted"}
	var hopts host.Options
	env := map[string]string{}
	if strings.HasPrefix(scenario, "auth/") {
		hopts.OAuth, env = conformanceOAuth(r.ctx, scenario, server, cctx)
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"server": server}})
	cfg, err := config.Parse(data, "conformance", &config.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "conformance-client: %v", err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 25*time.Second)
	defer cancel()
	hopts.Forward, hopts.ClientName, hopts.ClientVersion = true, "switchboard-conformance-client", r.env.Version
	hopts.Ephemeral = true // one scenario against the suite's server: nothing to keep
	h, err := host.Open(ctx, cfg, &hopts)
	if err != nil {
		return r.report(ExitUpstream, failureOf(fmt.Errorf("conformance-client: %w", err), codeError))
	}
	defer h.Close()
	if st := h.Servers()[0]; st.State != host.StateReady {
		return r.failf(ExitUpstream, codeError, "conformance-client: %s", st.LastError)
	}
	if err := conformanceScenario(ctx, h, scenario, cctx); err != nil {
		return r.failf(ExitUpstream, codeError, "conformance-client: %s: %v", scenario, err)
	}
	return ExitOK
}

// conformanceScenario drives one scenario on an open host (connecting and
// listing, which Open did, is the whole of several scenarios).
func conformanceScenario(ctx context.Context, h *host.Host, scenario string, cctx map[string]any) error {
	peer := &conformancePeer{}
	call := func(name string, args any) (*host.Result, error) {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		return h.Call(ctx, name, raw, &host.CallOptions{Peer: peer})
	}
	switch scenario {
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		return nil
	case "tools_call":
		_, err := call("add_numbers", map[string]any{"a": 5, "b": 3})
		return err
	case "elicitation-sep1034-client-defaults":
		_, err := call("test_client_elicitation_defaults", map[string]any{})
		return err
	case "sse-retry":
		_, err := call("test_reconnection", map[string]any{})
		return err
	case "json-schema-2020-12-preservation":
		t, err := h.View(host.Caller{}).Find(ctx, "json_schema_2020_12_tool")
		if err != nil {
			return err
		}
		_, err = call("json_schema_echo", map[string]any{"schema": t.InputSchema})
		return err
	case "sep-2322-client-request-state":
		peer.elicit = map[string]any{"confirmed": true}
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			call(name, map[string]any{}) // some are meant to be refused
		}
		return nil
	case "http-standard-headers":
		if tools := h.Tools(); len(tools) > 0 {
			call(tools[0].Name, map[string]any{})
		}
		if res := h.View(host.Caller{}).Resources(); len(res) > 0 {
			h.ReadResource(ctx, res[0].ID)
		}
		if prompts := h.View(host.Caller{}).Prompts(); len(prompts) > 0 {
			h.GetPrompt(ctx, prompts[0].ID, map[string]string{}, nil)
		}
		return nil
	case "http-custom-headers":
		calls, _ := cctx["toolCalls"].([]any)
		for _, c := range calls {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			args, _ := m["arguments"].(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			call(name, args)
		}
		return nil
	case "http-invalid-tool-headers":
		for _, t := range h.Tools() {
			call(t.Name, map[string]any{"region": "us-west1"})
		}
		return nil
	}
	if strings.HasPrefix(scenario, "auth/") {
		_, err := call("test-tool", map[string]any{})
		return err
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// conformanceOAuth configures the OAuth client for an auth scenario: the
// suite's authorization server redirects at once, so the browser leg is
// one GET whose Location carries the code. The scenario's pre-registered
// client (MCP_CONFORMANCE_CONTEXT's client_id and client_secret) goes into
// the server's "oauth" block, its secret through the environment of the
// configuration, as a person would write it.
func conformanceOAuth(ctx context.Context, scenario string, server map[string]any, cctx map[string]any) (*host.OAuthOptions, map[string]string) {
	env := map[string]string{}
	block := map[string]any{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
	if id, _ := cctx["client_id"].(string); id != "" {
		block["clientId"] = id
		if secret, _ := cctx["client_secret"].(string); secret != "" {
			env["CONFORMANCE_CLIENT_SECRET"] = secret
			block["clientSecretEnv"] = "CONFORMANCE_CLIENT_SECRET"
		}
		if key, _ := cctx["private_key_pem"].(string); key != "" {
			env["CONFORMANCE_PRIVATE_KEY"] = key
			block["privateKeyEnv"] = "CONFORMANCE_PRIVATE_KEY"
		}
	}
	if jwt, _ := cctx["valid_jwt"].(string); jwt != "" {
		// Workload identity federation: the platform's token is the grant.
		env["CONFORMANCE_WORKLOAD_JWT"] = jwt
		block = map[string]any{"grant": "jwt_bearer", "assertionEnv": "CONFORMANCE_WORKLOAD_JWT"}
		if id, _ := cctx["client_id"].(string); id != "" {
			block["clientId"] = id
		}
	}
	if idToken, _ := cctx["idp_id_token"].(string); idToken != "" {
		// Enterprise-managed authorization: the person's ID token from
		// the identity provider, exchanged there for the grant.
		env["CONFORMANCE_ID_TOKEN"] = idToken
		block["grant"] = "enterprise"
		block["assertionEnv"] = "CONFORMANCE_ID_TOKEN"
		block["idpTokenUrl"], _ = cctx["idp_token_endpoint"].(string)
		block["idpClientId"], _ = cctx["idp_client_id"].(string)
		delete(block, "clientMetadataUrl")
	}
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		// A machine client: no person, no login.
		block["grant"] = "client_credentials"
		delete(block, "clientMetadataUrl")
	}
	if block["clientSecretEnv"] != nil || block["privateKeyEnv"] != nil || block["assertionEnv"] != nil || block["grant"] != nil {
		// A credential is configured with its issuer, which a person
		// reads from the server's metadata once; the suite's changes
		// with each scenario.
		if iss, _ := cctx["issuer"].(string); iss != "" {
			block["issuer"] = iss
		} else {
			u, _ := server["url"].(string)
			block["issuer"] = conformanceIssuer(ctx, u)
		}
	}
	server["oauth"] = block
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &host.OAuthOptions{
		RedirectURL: "http://localhost:3000/callback",
		Authorize: func(ctx context.Context, _ string, authURL string) (*auth.AuthorizationResult, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, fmt.Errorf("the authorization server's redirect: %w", err)
			}
			q := loc.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	}, env
}

// conformanceIssuer finds the issuer of the authorization server that
// the suite's server at serverURL names: its protected-resource metadata
// (the path-based well-known URL, the root one, else where its challenge
// says), then that server's metadata; the server's origin when it has
// none (the 2025-03-26 fallback).
func conformanceIssuer(ctx context.Context, serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		return serverURL
	}
	origin := u.Scheme + "://" + u.Host
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	get := func(method, target string, v any) *http.Response {
		req, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader("{}"))
		if err != nil {
			return nil
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		if v != nil && resp.StatusCode == http.StatusOK {
			json.NewDecoder(resp.Body).Decode(v) //nolint:errcheck // an empty v is no metadata
		}
		return resp
	}
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	tries := []string{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), origin + "/.well-known/oauth-protected-resource"}
	for i := 0; i < len(tries) && len(prm.AuthorizationServers) == 0; i++ {
		get(http.MethodGet, tries[i], &prm)
		if i == len(tries)-1 && len(prm.AuthorizationServers) == 0 {
			if resp := get(http.MethodPost, serverURL, nil); resp != nil {
				if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
					for _, c := range cs {
						if m := c.Params["resource_metadata"]; m != "" {
							get(http.MethodGet, m, &prm)
						}
					}
				}
			}
		}
	}
	if len(prm.AuthorizationServers) == 0 {
		return origin
	}
	as := prm.AuthorizationServers[0]
	if asm, err := auth.GetAuthServerMetadata(ctx, as, http.DefaultClient); err == nil && asm != nil && asm.Issuer != "" {
		return asm.Issuer
	}
	return as
}

// conformancePeer answers a server's requests the way the suite expects of
// a client: elicitations accepted (with schema defaults applied by go-sdk
// on the legacy path), sampling with a canned message, no roots.
type conformancePeer struct {
	elicit map[string]any // the accepted content; nil means {}
}

func (p *conformancePeer) CreateMessage(_ context.Context, _ string, _ *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "switchboard-conformance", Content: []mcp.Content{&mcp.TextContent{Text: "This is a test response from the client"}}}, nil
}

func (p *conformancePeer) Elicit(_ context.Context, _ string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	content := p.elicit
	if content == nil {
		content = schemaDefaults(params.RequestedSchema)
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// schemaDefaults collects the default of each top-level property of a form
// schema (go-sdk applies them on the legacy path; the multi-round-trip path
// answers here).
func schemaDefaults(schema any) map[string]any {
	out := map[string]any{}
	raw, err := json.Marshal(schema)
	if err != nil {
		return out
	}
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return out
	}
	for k, v := range s.Properties {
		if v.Default != nil {
			out[k] = v.Default
		}
	}
	return out
}

func (p *conformancePeer) ListRoots(context.Context, string) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
}

func (p *conformancePeer) Log(_ context.Context, server string, params *mcp.LoggingMessageParams) {
	fmt.Fprintf(os.Stderr, "log from %s: %s %s\n", launcher.Escape(server), launcher.Escape(string(params.Level)), launcher.Escape(fmt.Sprint(params.Data)))
}
