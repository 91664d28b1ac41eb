//go:build unix

package launcher

import (
	"os/exec"
)

// startServer starts cmd, the server itself, under the shim when this
// program can run it (see [MaybeRunShim]) and the kernel lets us create
// the namespaces, and directly otherwise. It returns the command that was
// started (the shim's or cmd), the shim (nil without one), and the forker
// reservation to release once that command is reaped.
func startServer(cmd *exec.Cmd, spec Spec, conf *confinement) (*exec.Cmd, *shim, func(), error) {
	killLeftovers(spec.LeftoverDir, spec.Logger)
	if useShim() && !spec.direct {
		sc, sh, err := shimCmd(cmd, conf)
		if err == nil {
			var release func()
			release, err = startCmd(sc)
			if err == nil {
				if err := sh.started(conf); err != nil {
					sc.Wait() // the shim exits at once after saying why
					release()
					sh.close()
					return nil, nil, func() {}, err
				}
				return sc, sh, release, nil
			}
			sh.close()
		}
		if namespaceRefused(err) && noNamespaces.CompareAndSwap(false, true) {
			spec.Logger.Warn("cannot give servers a PID namespace of their own; they start without one, "+
				"and what one leaves in its process group if this program is killed is killed at the next start", "err", err)
		} else {
			spec.Logger.Warn("cannot start the server under the launcher's shim; starting it directly",
				"server", spec.Server, "err", err)
		}
	}
	if conf.enforced() {
		// Nothing applies the sandbox without the shim.
		if err := conf.unconfined(spec.Server); err != nil {
			return cmd, nil, func() {}, err
		}
	}
	release, err := startCmd(cmd)
	if err != nil {
		return cmd, nil, release, err
	}
	unrecord := recordGroup(spec.LeftoverDir, cmd.Process.Pid, spec.Logger)
	return cmd, nil, func() { unrecord(); release() }, nil
}
