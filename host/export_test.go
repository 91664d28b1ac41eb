package host

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/hostlink"
)

// SetGrantRecheck sets how often a caller's connection checks that its
// grant is still kept, until the returned function restores it.
func SetGrantRecheck(d time.Duration) (restore func()) {
	old := grantRecheck
	grantRecheck = d
	return func() { grantRecheck = old }
}

// Refused records a refusal as View.Resolve does, with the error given.
func Refused(ctx context.Context, v *View, name string, args json.RawMessage, err error) {
	v.refused(ctx, name, args, err)
}

// What the package's own tests reach beyond the API: the link's methods,
// the operator's view's lists, and callers' own logins by name.

func (h *Host) Readiness(ctx context.Context) error          { return h.readiness(ctx) }
func (h *Host) StoreUp() bool                                { return h.storeUp() }
func (h *Host) AuditStats() hostlink.AuditStats              { return h.auditStats() }
func (h *Host) LiveCalls() []hostlink.LiveCall               { return h.live.list() }
func (h *Host) ServerPins() []hostlink.ServerPins            { return h.serverPins() }
func (h *Host) RawTool(name string) (json.RawMessage, error) { return h.rawTool(name) }
func (h *Host) Refresh(ctx context.Context, servers ...string) error {
	return h.refresh(ctx, servers...)
}
func (h *Host) CallerConns() int                   { return h.callerConns() }
func (h *Host) OAuthCallback() http.Handler        { return h.oauthCallback() }
func (h *Host) Tool(name string) (Tool, error)     { return h.tool(name) }
func (h *Host) ModelTools() []Tool                 { return h.View(Caller{}).Tools() }
func (h *Host) Instructions() []ServerInstructions { return h.instructions() }
func (h *Host) ProviderTools(format string) (*ProviderTools, error) {
	return h.View(Caller{}).ProviderTools(format)
}

func (h *Host) LoginAs(ctx context.Context, caller, server string) (*Login, error) {
	return h.loginAs(ctx, caller, server)
}

func (h *Host) LogoutAs(ctx context.Context, caller, server string) (int, error) {
	return h.logoutAs(ctx, caller, server)
}

// SearchWords is Search without a context, its error dropped.
func (h *Host) SearchWords(query string, k int) []Tool {
	tools, _ := h.Search(context.Background(), query, k)
	return tools
}
