package era_test

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/era"
)

// The eras agree with what go-sdk serves: each version it knows is modern
// or one of the known legacy ones.
func TestAgreesWithGoSDK(t *testing.T) {
	for _, v := range mcp.SupportedProtocolVersions() {
		if !era.Modern(v) && !slices.Contains(era.LegacyVersions(), v) {
			t.Errorf("go-sdk's %s is neither modern nor a known legacy version", v)
		}
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), era.Sessionless) {
		t.Errorf("go-sdk does not serve %s", era.Sessionless)
	}
}
