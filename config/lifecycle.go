package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Lifecycle settings of a server: when it starts and stops, how often
// start-up is retried, and how changes to its tools' definitions are
// approved. Parse fills every field.
type Lifecycle struct {
	// Eager starts a stdio server at start-up even when its catalogue is
	// saved ("eager"); otherwise it starts on first use. Default false.
	Eager bool
	// IdleTimeout stops a stdio server after this long without a call
	// ("idleTimeoutMs"); 0 means never.
	IdleTimeout time.Duration
	// StartupAttempts is how many times start-up is tried
	// ("startupAttempts", 1..10); default 3.
	StartupAttempts int
	// RetryAfter is when a server left out is first probed again
	// ("retryMs"); default 30 s. Later probes double, up to 20× it.
	RetryAfter time.Duration
	// Approval is "auto" (first sight approves a tool's definition; the
	// default) or "manual" (every new definition waits for `switchboard
	// approve`).
	Approval string
	// OnDrift is what happens when an approved definition changes:
	// "hold" (held back until approved; the default for servers that are
	// not trusted), "warn" (kept, with a warning; the default for trusted
	// servers) or "accept" (the new definition is approved).
	OnDrift string
	// LockToolList refuses list changes after the first snapshot
	// ("lockToolList"). Default false.
	LockToolList bool
}

// Lifecycle values and defaults.
const (
	ApprovalAuto   = "auto"
	ApprovalManual = "manual"

	DriftHold   = "hold"
	DriftWarn   = "warn"
	DriftAccept = "accept"

	DefaultStartupAttempts = 3
	DefaultRetryAfter      = 30 * time.Second
)

// lifecycleFields are the JSON keys, for unknown-field suggestions.
var lifecycleFields = []string{"eager", "idleTimeoutMs", "startupAttempts", "retryMs", "approval", "onDrift", "lockToolList"}

// decodeLifecycle reads one lifecycle member of a server; it reports
// whether key was one.
func (d *decoder) decodeLifecycle(l *Lifecycle, set map[string]bool, key string, n *node, p *jsonPath, server string) bool {
	switch key {
	case "eager":
		l.Eager, _ = d.boolean(n, p, server)
	case "idleTimeoutMs":
		l.IdleTimeout, _ = d.millis(n, p, server)
	case "startupAttempts":
		l.StartupAttempts, _ = d.integer(n, p, server, 1, 10)
	case "retryMs":
		l.RetryAfter, _ = d.millis(n, p, server)
	case "approval":
		if v, ok := d.str(n, p, server); ok {
			if v != ApprovalAuto && v != ApprovalManual {
				d.add(p, server, fmt.Sprintf("unknown value %s: want %s", quote(v), quoteList([]string{ApprovalAuto, ApprovalManual})), nil)
			}
			l.Approval = v
		}
	case "onDrift":
		if v, ok := d.str(n, p, server); ok {
			if v != DriftHold && v != DriftWarn && v != DriftAccept {
				d.add(p, server, fmt.Sprintf("unknown value %s: want %s", quote(v), quoteList([]string{DriftHold, DriftWarn, DriftAccept})), nil)
			}
			l.OnDrift = v
		}
	case "lockToolList":
		l.LockToolList, _ = d.boolean(n, p, server)
	default:
		return false
	}
	set[key] = true
	return true
}

// withDefaults fills the lifecycle defaults, which depend on trust.
func (l Lifecycle) withDefaults(t Trust) Lifecycle {
	if l.StartupAttempts == 0 {
		l.StartupAttempts = DefaultStartupAttempts
	}
	if l.RetryAfter == 0 {
		l.RetryAfter = DefaultRetryAfter
	}
	if l.Approval == "" {
		l.Approval = ApprovalAuto
	}
	if l.OnDrift == "" {
		l.OnDrift = DriftHold
		if t.Level() == TrustTrusted {
			l.OnDrift = DriftWarn
		}
	}
	return l
}

// Fingerprint identifies what a server is: its transport, the resolved
// launch or connection settings (credentials included, and the pinned
// protocol version, which decides what the server offers) and the settings
// that change what it advertises. A saved catalogue is reused only under
// the same fingerprint. It is a SHA-256, so it reveals no secret; it
// changes when a referenced environment variable's value does. An
// Unusable server's fingerprint covers its fields as written (the Redacted
// view) and never matches a usable server's.
func (s *Server) Fingerprint() string {
	if s.Unusable != nil {
		r := s.Redacted()
		v := struct {
			Unusable  bool
			Transport Transport
			Command   string
			Args      []string
			Env       map[string]string
			Cwd       string
			URL       string
			Headers   map[string]string
		}{true, r.Transport, r.Command, r.Args, r.Env, r.Cwd, r.URL, r.Headers}
		b, _ := json.Marshal(v)
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	v := struct {
		Transport Transport
		Command   string
		Args      []string
		Env       map[string]string
		Cwd       string
		URL       string
		Headers   map[string]string
		// Omitted when empty, so that servers without a pin keep the
		// fingerprint of their saved catalogue.
		ProtocolVersion string `json:",omitempty"`
	}{s.Transport, s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Headers, s.ProtocolVersion}
	b, _ := json.Marshal(v) // maps are encoded with sorted keys
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
