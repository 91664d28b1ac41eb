package host

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// link is a Host's hostlink.Link: what the gateway, its status page and
// the command line reach beyond the library's API.
type link struct{ h *Host }

func init() {
	hostlink.Set(
		func(h any) hostlink.Link { return link{h.(*Host)} },
		func(opts any, lock map[string]hostlink.ServerPins) { opts.(*Options).lock = lock },
		func(opts any, st store.Store) { opts.(*Options).store = st },
	)
}

func (l link) Readiness(ctx context.Context) error { return l.h.readiness(ctx) }
func (l link) StoreUp() bool                       { return l.h.storeUp() }
func (l link) AuditStats() hostlink.AuditStats     { return l.h.auditStats() }
func (l link) CallsInFlight() map[string]int       { return l.h.callsInFlight() }
func (l link) LiveCalls() []hostlink.LiveCall      { return l.h.live.list() }
func (l link) SpillBytes() int                     { return l.h.spillBytes() }
func (l link) ApprovalsChanged()                   { l.h.approvalsChanged() }
func (l link) OAuthCallback() http.Handler         { return l.h.oauthCallback() }
func (l link) Clients() []*config.Client           { return l.h.clients() }
func (l link) Profile(name string) *config.Profile { return l.h.profile(name) }
func (l link) RawTool(name string) (json.RawMessage, error) {
	return l.h.rawTool(name)
}

func (l link) Secret(ctx context.Context, name string) ([]byte, error) {
	return l.h.secret(ctx, name)
}

func (l link) CallerGrants(ctx context.Context, server string) ([]hostlink.CallerGrant, error) {
	return l.h.callerGrants(ctx, server)
}

func (l link) Refresh(ctx context.Context, servers ...string) error {
	return l.h.refresh(ctx, servers...)
}

func (l link) ServerPins() []hostlink.ServerPins { return l.h.serverPins() }
