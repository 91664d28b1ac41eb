package cli

import "strings"

// shells are the shells `completion` writes a script for.
var shells = []string{"bash", "zsh", "fish"}

func completionCommand(*run) *command {
	return &command{
		name: "completion", args: "bash|zsh|fish",
		summary: "print the script that completes commands, flags, server and tool names in your shell (see the examples)",
		examples: []string{
			"switchboard completion bash > /etc/bash_completion.d/switchboard",
			"source <(switchboard completion bash)",
			"switchboard completion zsh > \"${fpath[1]}/_switchboard\"",
			"switchboard completion fish > ~/.config/fish/completions/switchboard.fish",
		},
		run: runCompletion,
		complete: func(_ *run, args []string) []string {
			if len(args) > 0 {
				return nil
			}
			return shells
		},
	}
}

// runCompletion prints the completion script of the shell named.
func runCompletion(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	root := r.cobra.Root()
	var err error
	switch r.args[0] {
	case "bash":
		err = root.GenBashCompletionV2(r.env.Stdout, true)
	case "zsh":
		err = root.GenZshCompletion(r.env.Stdout)
	case "fish":
		err = root.GenFishCompletion(r.env.Stdout, true)
	default:
		return r.usagef("completion: no script for %q; the shells are %s", r.args[0], strings.Join(shells, ", "))
	}
	if err != nil {
		return r.failf(ExitUpstream, codeError, "writing the script: %v", err)
	}
	return ExitOK
}
