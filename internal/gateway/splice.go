package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// A tool result goes back to the client as the upstream sent it (after
// the host's guard), without being decoded into go-sdk's types and encoded
// again: that would cost a decode and an encode of the whole result per
// call, and lose what go-sdk's types cannot hold (unknown fields, content
// types newer than go-sdk). go-sdk still frames, sequences and sends every
// message; only the result's bytes are spliced in, at the edge:
//
//   - the splice middleware puts a holder in the tools/call context;
//   - the tool handler leaves the result's bytes in it and returns a
//     stand-in carrying isError;
//   - the middleware wraps the stand-in in a splicedResult, whose
//     MarshalJSON, called when go-sdk encodes the response, writes the
//     upstream's members with what go-sdk added to the stand-in.

// spliceHolder carries a tool result's bytes from the tool handler to the
// splice middleware of the same request.
type spliceHolder struct{ raw json.RawMessage }

type spliceKey struct{}

// spliceResult hands raw to the middleware of ctx's request and returns
// the stand-in for go-sdk. go-sdk runs every request through the server's
// middleware, so ctx always has a holder.
func spliceResult(ctx context.Context, raw json.RawMessage, isError bool) *mcp.CallToolResult {
	h, _ := ctx.Value(spliceKey{}).(*spliceHolder)
	if h == nil {
		panic("gateway: a tool call that did not pass the splice middleware")
	}
	h.raw = raw
	// A non-nil Content: go-sdk copies a result whose Content is nil.
	return &mcp.CallToolResult{Content: []mcp.Content{}, IsError: isError}
}

// splice is receiving middleware that wraps a tools/call stand-in in a
// splicedResult.
func (g *Gateway) splice(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		h := new(spliceHolder)
		res, err := next(context.WithValue(ctx, spliceKey{}, h), method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && h.raw != nil {
			return &splicedResult{CallToolResult: r, raw: h.raw}, nil
		}
		return res, err
	}
}

// splicedResult is a tools/call result whose members are the upstream's
// bytes. go-sdk sees the CallToolResult it embeds and adds to it what the
// protocol asks of the gateway's own results (on 2026-07-28, resultType
// and _meta's serverInfo).
type splicedResult struct {
	*mcp.CallToolResult
	raw json.RawMessage // a JSON object
}

// MarshalJSON writes the upstream's members in their order, except those
// the gateway speaks for itself: _meta is the upstream's without the
// protocol's keys, merged with the stand-in's; resultType is the
// stand-in's (a legacy client gets none). A result without content gets
// an empty list, as go-sdk would send.
func (r *splicedResult) MarshalJSON() ([]byte, error) {
	own, err := r.CallToolResult.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var ownMeta, ownType []byte
	if err := members(own, func(key string, _, value []byte) {
		switch key {
		case "_meta":
			ownMeta = value
		case "resultType":
			ownType = value
		}
	}); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(r.raw)+len(ownMeta)+len(ownType)+48)
	out = append(out, '{')
	var upMeta []byte
	content := false
	if err := members(r.raw, func(key string, member, value []byte) {
		switch key {
		case "_meta":
			upMeta = value
			return
		case "resultType":
			return
		case "content":
			content = true
		}
		out = appendMember(out, member)
	}); err != nil {
		return nil, err
	}
	if !content {
		out = appendMember(out, []byte(`"content":[]`))
	}
	meta, err := mergeMeta(upMeta, ownMeta)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		out = append(appendMember(out, []byte(`"_meta":`)), meta...)
	}
	if ownType != nil {
		out = append(appendMember(out, []byte(`"resultType":`)), ownType...)
	}
	return append(out, '}'), nil
}

// appendMember appends a member to an object being written after '{',
// with the comma before it when it is not the first.
func appendMember(out, member []byte) []byte {
	if len(member) == 0 {
		return out
	}
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	return append(out, member...)
}

// members calls fn for each member of the object d with its decoded key,
// the member's bytes from its key's quote to the end of its value, and the
// value's bytes.
func members(d []byte, fn func(key string, member, value []byte)) error {
	_, err := jsonscan.Object(d, jsonscan.SkipSpace(d, 0), func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(d, m.Value, 1)
		if err == nil {
			fn(string(m.Key), d[m.KeyStart:end], d[m.Value:end])
		}
		return end, err
	})
	return err
}

// mergeMeta returns the upstream's _meta without the protocol's own keys
// (its serverInfo, for one: the gateway speaks for itself), with the
// stand-in's keys over it; nil when nothing is left.
func mergeMeta(up, own []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if len(up) > 0 && up[0] == '{' {
		if err := json.Unmarshal(up, &m); err != nil {
			return nil, err
		}
		for k := range m {
			if strings.HasPrefix(k, protocolMetaPrefix) {
				delete(m, k)
			}
		}
	}
	if len(own) > 0 && own[0] == '{' {
		var o map[string]json.RawMessage
		if err := json.Unmarshal(own, &o); err != nil {
			return nil, err
		}
		if m == nil {
			m = o
		} else {
			for k, v := range o {
				m[k] = v
			}
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}
