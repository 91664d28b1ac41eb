package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOperator: the callers offered an upstream login (whose grant serves
// every caller) are the operator's: stdio, the front door's single token,
// the static token under authentication middleware; never a named client
// or a JWT's subject.
func TestOperator(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		extra *mcp.RequestExtra
		want  bool
	}{
		{"stdio", nil, true},
		{"front door token", &mcp.RequestExtra{}, true},
		{"static token", &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{}}, true},
		{"named client", &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "client:ci"}}, false},
		{"JWT subject", &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "sub:alice"}}, false},
	} {
		if got := operator(tt.extra); got != tt.want {
			t.Errorf("%s: operator = %v, want %v", tt.name, got, tt.want)
		}
	}
}
