package host

import "github.com/switchboard-mcp/switchboard/internal/sanitize"

func cleanText(s string) string {
	clean, _ := sanitize.Strip(s)
	return clean
}
