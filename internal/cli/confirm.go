package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// confirmer is the CLI's host.Confirmer: yes (--yes) confirms; otherwise
// a person at a terminal is asked, and anything else is refused.
func (r *run) confirmer(yes bool) func(context.Context, host.Confirmation) (bool, error) {
	return func(ctx context.Context, c host.Confirmation) (bool, error) {
		if yes {
			return true, nil
		}
		return r.confirm(ctx, c)
	}
}

// confirm asks a person at a terminal, and refuses anywhere else.
func (r *run) confirm(_ context.Context, c host.Confirmation) (bool, error) {
	f, ok := r.env.Stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return false, errors.New("the policy asks for confirmation (policy.confirm): run it at a terminal, or pass --yes")
	}
	fmt.Fprintf(r.env.Stderr, "Allow server %s to run its tool %s (%s)?\n  arguments: %s\n[y/N] ",
		launcher.Escape(c.Server), launcher.Escape(c.Tool), launcher.Escape(c.Reason), launcher.Escape(string(c.Arguments)))
	line, _ := bufio.NewReader(f).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// isTerminal reports whether f is a terminal: a character device that
// answers the terminal's ioctl, which /dev/null does not.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
