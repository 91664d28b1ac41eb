package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// stateTTL bounds how long a client may take to answer an input request.
const stateTTL = 15 * time.Minute

// sealer protects the requestState the gateway hands to 2026-07-28 clients
// (SEP-2322: "unauthenticated servers must encrypt, sign and verify"): it
// carries the upstream's own state and the tool it belongs to, signed with
// a key that lives as long as the gateway process, so a client can neither
// forge nor tamper with it, nor replay it against another tool.
type sealer struct {
	key []byte
	now func() time.Time
}

func newSealer() *sealer {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("gateway: no randomness for the request-state key: " + err.Error())
	}
	return &sealer{key: key, now: time.Now}
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
