package upstream

import (
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// ProgramNotFound reports whether err says a stdio server's program could
// not be found: another start-up attempt would fail the same way.
func ProgramNotFound(err error) bool {
	return errors.Is(err, launcher.ErrProgramNotFound)
}
