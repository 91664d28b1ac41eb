package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
)

// stateTTL bounds how long a client may take to answer an input request.
const stateTTL = 15 * time.Minute

// sealer protects the requestState the gateway hands to 2026-07-28 clients
// (SEP-2322: "unauthenticated servers must encrypt, sign and verify"): it
// carries the upstream's own state and the tool it belongs to, signed with
// a key, so a client can neither forge nor tamper with it, nor replay it
// against another tool. The key is the store's secret named stateKey when
// the host has a store, so that every replica sharing the store accepts
// the states of the others (a 2026-07-28 client's retry may reach any of
// them); else one of the process's own. It is never rotated.
type sealer struct {
	key []byte
	now func() time.Time
}

// stateKey names the store's secret that signs request states.
const stateKey = "gateway.requestState"

// stateKeyTimeout bounds the store's answer for the key.
const stateKeyTimeout = 10 * time.Second

// newSealer returns a sealer with key, or with a random key when key is
// nil.
func newSealer(key []byte) *sealer {
	if key == nil {
		key = make([]byte, 32)
		rand.Read(key) // never fails (crypto/rand)
	}
	return &sealer{key: key, now: time.Now}
}

// hostSealer returns a sealer with h's shared key (its link's Secret, internal/hostlink), or a key
// of its own when h has no store or the store cannot give it: then states
// this gateway issues hold on this gateway only, and log says so.
func hostSealer(h *host.Host, log *slog.Logger) *sealer {
	ctx, cancel := context.WithTimeout(context.Background(), stateKeyTimeout)
	defer cancel()
	key, err := hostlink.Of(h).Secret(ctx, stateKey)
	if err != nil {
		log.Warn("request states are signed with this process's own key: the other replicas will refuse them", "err", err)
		key = nil
	}
	return newSealer(key)
}

type sealedState struct {
	Tool     string `json:"t"` // canonical tool ID
	Upstream string `json:"s"` // the upstream's requestState
	Expires  int64  `json:"e"` // unix seconds
}

var errBadState = errors.New("requestState is not one Switchboard issued for this tool, or it has expired")

// statePrefix marks the states the gateway issues.
const statePrefix = "sb1."

// isSealed reports whether state claims to be one the gateway issued.
func isSealed(state string) bool { return strings.HasPrefix(state, statePrefix) }

func (s *sealer) seal(tool, upstream string) string {
	body, _ := json.Marshal(sealedState{Tool: tool, Upstream: upstream, Expires: s.now().Add(stateTTL).Unix()})
	b := base64.RawURLEncoding.EncodeToString(body)
	return statePrefix + b + "." + s.mac(b)
}

func (s *sealer) open(tool, state string) (string, error) {
	rest, ok := strings.CutPrefix(state, statePrefix)
	body, mac, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !hmac.Equal([]byte(mac), []byte(s.mac(body))) {
		return "", errBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	var st sealedState
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Tool != tool || s.now().Unix() > st.Expires {
		return "", errBadState
	}
	return st.Upstream, nil
}

func (s *sealer) mac(body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
