package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

// A legacy client gets results of its own era. go-sdk writes the
// 2026-07-28 revision's cache fields (ttlMs, cacheScope) on every list
// and resources/read result whatever the session's era, and a result
// taken from a 2026-07-28 upstream (prompts/get, resources/read,
// completion/complete) carries its resultType and the upstream's
// protocol-owned _meta. None of it means anything to a legacy client, so
// the legacyResults middleware leaves it out of these results. A tools/call
// result is written by the splice (splice.go), which already speaks the
// client's era.

// modernFields are the result members the 2026-07-28 revision added.
var modernFields = map[string]bool{"resultType": true, "ttlMs": true, "cacheScope": true}

// legacyMethods are the requests whose results may carry modernFields.
var legacyMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "prompts/get": true, "completion/complete": true,
}

// versioned is what go-sdk's server requests say of their era.
type versioned interface{ ProtocolVersion() string }

// legacyResults is receiving middleware that wraps the results of a legacy
// client's requests in a legacyResult.
func (g *Gateway) legacyResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !legacyMethods[method] {
			return res, err
		}
		if v, ok := req.(versioned); !ok || !era.Legacy(v.ProtocolVersion()) {
			return res, err
		}
		return legacyResult{res}, nil
	}
}

// legacyResult is a result written without modernFields and without the
// protocol's own _meta keys.
type legacyResult struct{ mcp.Result }

func (r legacyResult) MarshalJSON() ([]byte, error) {
	full, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(full))
	out = append(out, '{')
	var metaErr error
	err = members(full, func(key string, member, value []byte) {
		switch {
		case modernFields[key]:
			return
		case key == "_meta":
			meta, merr := mergeMeta(value, nil)
			if merr != nil {
				metaErr = merr
			}
			if meta == nil {
				return
			}
			member = append([]byte(`"_meta":`), meta...)
		}
		out = appendMember(out, member)
	})
	if err = errors.Join(err, metaErr); err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}
