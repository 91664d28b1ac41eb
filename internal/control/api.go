package control

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// APIPath is where Handler is served: every route is under it.
const APIPath = "/api/"

// actionTimeout bounds an action of the API (a restart waits for the
// server's start-up, itself bounded by its startupTimeoutMs).
const actionTimeout = 2 * time.Minute

// CallEntry is a call of the audit log as the API answers it: the keys and
// units of `switchboard log --json` (camelCase, milliseconds).
type CallEntry struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Tool      string    `json:"tool"` // canonical ID "server:tool"
	Server    string    `json:"server"`
	Caller    string    `json:"caller,omitempty"`     // as it authenticated
	Client    string    `json:"clientName,omitempty"` // the name the client gave itself
	Profile   string    `json:"profile,omitempty"`
	ArgShape  string    `json:"argShape"` // argument keys and types, never values
	Outcome   string    `json:"outcome"`  // "ok", "tool_error" or "error"
	Code      string    `json:"code,omitempty"`
	LatencyMs float64   `json:"latencyMs"` // to the microsecond
	BytesIn   int       `json:"bytesIn"`
	BytesOut  int       `json:"bytesOut"`
	Secrets   string    `json:"secrets,omitempty"`     // credentials found and what was done: "results:github-token:redacted,…"; never values
	Approval  string    `json:"approval,omitempty"`    // held, approved by whom and when, denied, expired, refused by the data-flow rule
	Run       string    `json:"run,omitempty"`         // the script run (code mode) the call belongs to
	As        string    `json:"upstreamAs,omitempty"`  // whom the server saw the call made by, for a server with oauth.perCaller
	Grant     string    `json:"callerGrant,omitempty"` // the decision about the caller's own grant: own, exchanged, needs_login, would_own, would_login
}

// EntryOf is c as the API answers it.
func EntryOf(c store.Call) CallEntry {
	return CallEntry{
		ID: c.ID, Time: c.Time, Tool: c.Tool, Server: c.Server, Caller: c.Caller, Client: c.ClientName, Profile: c.Profile, ArgShape: c.ArgShape,
		Outcome: c.Outcome, Code: c.Code, LatencyMs: float64(c.Latency.Microseconds()) / 1000,
		BytesIn: c.BytesIn, BytesOut: c.BytesOut, Secrets: c.Secrets, Approval: c.Approval, Run: c.Run, As: c.As, Grant: c.Grant,
	}
}

// Call is e as the store holds it.
func (e CallEntry) Call() store.Call {
	return store.Call{
		ID: e.ID, Time: e.Time, Tool: e.Tool, Server: e.Server, Caller: e.Caller, ClientName: e.Client, Profile: e.Profile, ArgShape: e.ArgShape,
		Outcome: e.Outcome, Code: e.Code, Latency: time.Duration(e.LatencyMs * float64(time.Millisecond)),
		BytesIn: e.BytesIn, BytesOut: e.BytesOut, Secrets: e.Secrets, Approval: e.Approval, Run: e.Run, As: e.As, Grant: e.Grant,
	}
}

// target is the body of approve and reject.
type target struct {
	Target string `json:"target"`
}

// apiError is the body of a refused request.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Handler serves the operations as JSON under APIPath, for a caller the
// front door has admitted (the bearer token, Host and Origin checked; a
// POST's body is JSON):
//
//	GET  /api/servers                  Status
//	POST /api/servers/{name}/restart   Restart
//	POST /api/servers/{name}/enable    SetEnabled(true)
//	POST /api/servers/{name}/disable   SetEnabled(false)
//	GET  /api/held[?target=T]          Held
//	POST /api/approve {"target": T}    Approve: {"approved": [labels]}
//	POST /api/reject  {"target": T}    Reject
//	GET  /api/calls[?server=S&tool=T&caller=C&outcome=O&limit=N]  Calls, as CallEntry
//	GET  /api/live                     Live
//	GET  /api/findings                 Findings
//	GET  /api/held-calls[?state=S]     HeldCalls (see heldcalls.go)
//	POST /api/held-calls/{id}/approve  DecideCall(true), body {"by": name}
//	POST /api/held-calls/{id}/deny     DecideCall(false), body {"by": name}
//
// A failure is {"error": {"code", "message"}} with the fault code's HTTP
// status.
func (c *Control) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/servers", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, c.Status())
	})
	action := func(do func(ctx context.Context, name string) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
			defer cancel()
			if err := do(ctx, r.PathValue("name")); err != nil {
				writeError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, struct{}{})
		}
	}
	mux.HandleFunc("POST /api/servers/{name}/restart", action(c.Restart))
	mux.HandleFunc("POST /api/servers/{name}/enable", action(func(ctx context.Context, name string) error { return c.SetEnabled(ctx, name, true) }))
	mux.HandleFunc("POST /api/servers/{name}/disable", action(func(ctx context.Context, name string) error { return c.SetEnabled(ctx, name, false) }))
	mux.HandleFunc("GET /api/held", func(w http.ResponseWriter, r *http.Request) {
		held, err := c.Held(r.Context(), r.URL.Query().Get("target"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, orEmpty(held))
	})
	mux.HandleFunc("POST /api/approve", func(w http.ResponseWriter, r *http.Request) {
		var t target
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil || t.Target == "" {
			writeError(w, fault.New(fault.CodeInvalidInput, "", "", errors.New(`the body must be {"target": "server[:tool]"}`)))
			return
		}
		approved, err := c.Approve(r.Context(), t.Target)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string][]string{"approved": approved})
	})
	mux.HandleFunc("POST /api/reject", func(w http.ResponseWriter, r *http.Request) {
		var t target
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil || t.Target == "" {
			writeError(w, fault.New(fault.CodeInvalidInput, "", "", errors.New(`the body must be {"target": "server:tool"}`)))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
		defer cancel()
		if err := c.Reject(ctx, t.Target); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("GET /api/calls", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := store.CallFilter{Server: q.Get("server"), Tool: q.Get("tool"), Caller: q.Get("caller"), Outcome: q.Get("outcome"), Run: q.Get("run")}
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				writeError(w, fault.New(fault.CodeInvalidInput, "", "", errors.New("limit must be a number")))
				return
			}
			f.Limit = n
		}
		calls, err := c.Calls(r.Context(), f)
		if err != nil {
			writeError(w, err)
			return
		}
		out := make([]CallEntry, 0, len(calls))
		for _, call := range calls {
			out = append(out, EntryOf(call))
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /api/live", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, c.Live())
	})
	mux.HandleFunc("GET /api/findings", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, orEmpty(c.Findings()))
	})
	c.heldCallRoutes(mux)
	mux.HandleFunc(APIPath, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, fault.New(fault.CodeNotFound, "", "", errors.New("no such operation")))
	})
	return mux
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client is gone
}

// writeError answers err with its fault code's HTTP status: the one place
// where the API maps codes to statuses.
func writeError(w http.ResponseWriter, err error) {
	code := fault.CodeOf(err)
	status := http.StatusInternalServerError
	switch code {
	case fault.CodeNotFound:
		status = http.StatusNotFound
	case fault.CodeInvalidInput:
		status = http.StatusBadRequest
	case fault.CodeUnavailable, fault.CodeRuntimeMissing, fault.CodeRuntimeTooOld:
		status = http.StatusServiceUnavailable
	case fault.CodeTimeout:
		status = http.StatusGatewayTimeout
	}
	if code == "" {
		code = "error"
	}
	msg := err.Error() // the operator sees everything, private errors included
	if fe, ok := errors.AsType[*fault.Error](err); ok && fe.Server == "" && fe.Op == "" && fe.Err != nil {
		msg = fe.Err.Error() // without the code, which is said beside it
	}
	var body apiError
	body.Error.Code, body.Error.Message = string(code), msg
	writeJSON(w, status, body)
}
