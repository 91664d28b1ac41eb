package host

import (
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
)

// maskErr hides sc's secrets in err's text (config.Mask), keeping its
// codes (fault.Mask). A server's errors go through it where the server
// records them (dial, dropped, loadSchedule) and where a call's error
// leaves (call), so that its LastError, its supervisor's reason, the
// saved schedule, the log, its events and its callers never read a
// secret the server echoed. Its stderr tail is masked by the launcher
// (upstream sets launcher.Spec.Mask).
func maskErr(sc *config.Server, err error) error {
	if err == nil {
		return nil
	}
	secrets := sc.SecretValues()
	return fault.Mask(err, func(s string) string { return config.Mask(s, secrets) })
}
