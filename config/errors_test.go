package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// srv wraps server fields in a one-server "mcpServers" document named "a".
func srv(fields string) string { return `{"mcpServers": {"a": {` + fields + `}}}` }

// TestParseErrors checks the exact message, file and JSON path of every
// kind of load error.
func TestParseErrors(t *testing.T) {
	env := fakeEnv{
		"EMPTY":   "",
		"NL":      "a\nb",
		"TOKEN":   "tok",
		"HOSTVAR": "h",
	}
	const F = testFile + ": "
	tests := []struct {
		name string
		src  string
		want []string // one line per error
	}{
		// The file as a whole.
		{"empty file", ``, []string{F + "file is empty: want a JSON object"}},
		{"not an object", `[]`, []string{F + "$: want object, got array"}},
		{"trailing comma", "{\"mcpServers\": {},\n}", []string{F + "invalid JSON at line 2, column 1: invalid character '}' looking for beginning of object key string (trailing commas are not allowed in JSON)"}},
		{"trailing comma in array", srv(`"command": "x", "args": ["a",]`), []string{F + "invalid JSON at line 1, column 52: invalid character ']' looking for beginning of value (trailing commas are not allowed in JSON)"}},
		{"comment", "{\n  // servers\n  \"mcpServers\": {}\n}", []string{F + "invalid JSON at line 2, column 3: invalid character '/' looking for beginning of object key string (comments are not allowed in JSON)"}},
		{"trailing data", `{"mcpServers": {}} {}`, []string{F + "invalid JSON at line 1, column 20: unexpected data after the top-level value"}},
		{"truncated", `{"mcpServers": {"a": {"command": "x"}}`, []string{F + "invalid JSON at line 1, column 39: unexpected end of input"}},
		{"missing servers", `{}`, []string{F + `$: missing "mcpServers" (or VS Code's "servers")`}},

		// Top level.
		{"unknown top-level field", `{"mcpServers": {}, "mcpServer": {}}`, []string{F + `$.mcpServer: unknown field "mcpServer" (did you mean "mcpServers"?)`}},
		{"opencode mcp", `{"mcp": {}, "mcpServers": {}}`, []string{F + `$.mcp: unknown field "mcp" (did you mean "mcpServers"? opencode's "mcp" shape is not supported)`}},
		{"both shapes", `{"mcpServers": {}, "servers": {}}`, []string{F + `$.servers: both "mcpServers" and "servers" are present; use one`}},
		{"inputs with mcpServers", `{"mcpServers": {}, "inputs": []}`, []string{F + `$.inputs: "inputs" belongs to VS Code's "servers" shape, not "mcpServers"`}},
		{"servers not an object", `{"mcpServers": []}`, []string{F + "$.mcpServers: want object, got array"}},
		{"servers null", `{"servers": null}`, []string{F + "$.servers: want object, got null"}},
		{"schema not a string", `{"$schema": 1, "mcpServers": {}}`, []string{F + "$.$schema: want string, got number"}},

		// Duplicate keys, at every level.
		{"duplicate top-level key", `{"mcpServers": {}, "mcpServers": {}}`, []string{F + `$.mcpServers: duplicate key "mcpServers"`}},
		{"duplicate server", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, []string{F + `$.mcpServers.a: duplicate key "a"`}},
		{"duplicate server field", srv(`"command": "x", "command": "y"`), []string{F + `$.mcpServers.a.command: duplicate key "command"`}},
		{"duplicate env key", srv(`"command": "x", "env": {"K": "1", "K": "2"}`), []string{F + `$.mcpServers.a.env.K: duplicate key "K"`}},
		{"duplicate header", srv(`"url": "https://h/", "headers": {"X-A": "1", "X-A": "1"}`), []string{F + `$.mcpServers.a.headers.X-A: duplicate key "X-A"`}},
		{"duplicate via escape", `{"mcpServers": {"a": {"command": "x"}, "\u0061": {"command": "x"}}}`, []string{F + `$.mcpServers.a: duplicate key "a"`}},
		{"duplicate input key", `{"servers": {}, "inputs": [{"id": "a", "id": "b", "type": "promptString"}]}`, []string{F + `$.inputs[0].id: duplicate key "id"`}},
		{"several duplicates", `{"mcpServers": {"a": {"command": "x", "args": [], "args": []}, "b": {"url": "https://h/", "url": "https://h/"}}}`, []string{
			F + `$.mcpServers.a.args: duplicate key "args"`,
			F + `$.mcpServers.b.url: duplicate key "url"`,
		}},

		// Server names.
		{"server name differing in case", `{"mcpServers": {"GitHub": {"command": "x"}, "github": {"command": "y"}}}`, []string{F + `$.mcpServers.github: server name differs from "GitHub" only in case; names must be unique ignoring case`}},
		{"empty name", `{"mcpServers": {"": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers[""]: invalid server name: empty`}},
		{"name with space", `{"mcpServers": {"a b": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers["a b"]: invalid server name: contains whitespace`}},
		{"name with tab", `{"mcpServers": {"a\tb": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers["a\tb"]: invalid server name: contains whitespace`}},
		{"name with no-break space", `{"mcpServers": {"a\u00a0b": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers["a\u00a0b"]: invalid server name: contains whitespace`}},
		{"name with control", `{"mcpServers": {"a\u0000b": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers["a\x00b"]: invalid server name: contains a control or non-printable character`}},
		{"name with zero-width space", `{"mcpServers": {"a\u200bb": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers["a\u200bb"]: invalid server name: contains a control or non-printable character`}},
		{"name too long", `{"mcpServers": {"` + strings.Repeat("n", 65) + `": {"command": "x", "prefix": "p"}}}`, []string{F + `$.mcpServers.` + strings.Repeat("n", 65) + `: invalid server name: longer than 64 bytes`}},
		{"explicit prefixes clash on servers with colons", `{"mcpServers": {"gh:a": {"command": "x", "prefix": "gh"}, "gh:b": {"command": "x", "prefix": "gh"}}}`, []string{F + `$.mcpServers["gh:b"].prefix: prefix "gh" is already used by server "gh:a" (prefixes must be unique ignoring case)`}},

		// Unknown fields and types.
		{"unknown field", `{"mcpServers": {"github": {"comand": "npx"}}}`, []string{F + `$.mcpServers.github.comand: unknown field "comand" (did you mean "command"?)`}},
		{"unknown field case", srv(`"Command": "x"`), []string{F + `$.mcpServers.a.Command: unknown field "Command" (did you mean "command"?)`}},
		{"unknown field typo", srv(`"command": "x", "enabledTool": []`), []string{F + `$.mcpServers.a.enabledTool: unknown field "enabledTool" (did you mean "enabledTools"?)`}},
		{"unknown field no suggestion", srv(`"command": "x", "color": "red"`), []string{F + `$.mcpServers.a.color: unknown field "color"`}},
		{"unknown transport field", srv(`"command": "x", "transport": "stdio"`), []string{F + `$.mcpServers.a.transport: unknown field "transport" (did you mean "type"?)`}},
		{"envFile", srv(`"command": "x", "envFile": ".env"`), []string{F + `$.mcpServers.a.envFile: unknown field "envFile" (env files are not supported: reference environment variables as ${VAR} in "env")`}},
		{"autoApprove", srv(`"command": "x", "autoApprove": []`), []string{F + `$.mcpServers.a.autoApprove: unknown field "autoApprove" (Switchboard does not support auto-approval lists; remove it)`}},
		{"arg type", `{"mcpServers": {"x": {"command": "x", "args": ["a", "b", 3]}}}`, []string{F + `$.mcpServers.x.args[2]: want string, got number`}},
		{"args not array", srv(`"command": "x", "args": "a b"`), []string{F + `$.mcpServers.a.args: want array of strings, got string`}},
		{"server not object", `{"mcpServers": {"a": "npx"}}`, []string{F + `$.mcpServers.a: want object, got string`}},
		{"command not string", srv(`"command": ["npx", "x"]`), []string{F + `$.mcpServers.a.command: want string, got array`}},
		{"env value type", srv(`"command": "x", "env": {"K": 1, "L": true, "M": null}`), []string{
			F + `$.mcpServers.a.env.K: want string, got number`,
			F + `$.mcpServers.a.env.L: want string, got boolean`,
			F + `$.mcpServers.a.env.M: want string, got null`,
		}},
		{"env not object", srv(`"command": "x", "env": ["K=V"]`), []string{F + `$.mcpServers.a.env: want object of strings, got array`}},
		{"enabled type", srv(`"command": "x", "enabled": "false"`), []string{F + `$.mcpServers.a.enabled: want boolean, got string`}},
		{"nested unknown in gh:sub", `{"mcpServers": {"gh:sub": {"command": "x", "prefix": "g", "cwdir": "/"}}}`, []string{F + `$.mcpServers["gh:sub"].cwdir: unknown field "cwdir" (did you mean "cwd"?)`}},

		// Transports and the fields they allow.
		{"command and url", srv(`"command": "x", "url": "https://h/"`), []string{F + `$.mcpServers.a: has both "command" and "url": a server is either stdio (command) or http/sse (url)`}},
		{"command and serverUrl", srv(`"type": "stdio", "command": "x", "serverUrl": "https://h/"`), []string{F + `$.mcpServers.a: has both "command" and "serverUrl": a server is either stdio (command) or http/sse (url)`}},
		{"url and serverUrl", srv(`"url": "https://h/", "serverUrl": "https://h/"`), []string{F + `$.mcpServers.a.serverUrl: both "url" and "serverUrl" are set ("serverUrl" is Windsurf's name for "url"); use one`}},
		{"neither command nor url", srv(`"args": ["x"]`), []string{F + `$.mcpServers.a: needs "command" (a stdio server) or "url" (an http or sse server)`}},
		{"unknown type", srv(`"type": "websocket", "url": "wss://h/"`), []string{F + `$.mcpServers.a.type: unknown type "websocket": want "stdio", "http" or "sse" (or an alias such as "streamable-http")`}},
		{"empty type", srv(`"type": "", "command": "x"`), []string{F + `$.mcpServers.a.type: unknown type "": want "stdio", "http" or "sse" (or an alias such as "streamable-http")`}},
		{"stdio with url only", srv(`"type": "stdio", "url": "https://h/"`), []string{
			F + `$.mcpServers.a: a stdio server needs "command"; this server is stdio (type "stdio")`,
			F + `$.mcpServers.a.url: "url" is only for http and sse servers; this server is stdio (type "stdio")`,
		}},
		{"stdio with headers", srv(`"command": "x", "headers": {"X": "y"}`), []string{F + `$.mcpServers.a.headers: "headers" is only for http and sse servers; this server is stdio`}},
		{"unknown protocol version", srv(`"command": "x", "protocolVersion": "2025-11-52"`), []string{F + `$.mcpServers.a.protocolVersion: unknown protocol version "2025-11-52": want "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05" (did you mean "2025-11-25"?)`}},
		{"future protocol version", srv(`"url": "https://h/", "protocolVersion": "2027-01-01"`), []string{F + `$.mcpServers.a.protocolVersion: unknown protocol version "2027-01-01": want "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05"`}},
		{"empty protocol version", srv(`"command": "x", "protocolVersion": ""`), []string{F + `$.mcpServers.a.protocolVersion: unknown protocol version "": want "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05"`}},
		{"sse with modern protocol version", srv(`"type": "sse", "url": "https://h/", "protocolVersion": "2026-07-28"`), []string{F + `$.mcpServers.a.protocolVersion: protocol version "2026-07-28" is not for sse servers (the HTTP+SSE transport is of the legacy era): want "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05"`}},
		{"sse with unknown protocol version", srv(`"type": "sse", "url": "https://h/", "protocolVersion": "2025-06-19"`), []string{F + `$.mcpServers.a.protocolVersion: unknown protocol version "2025-06-19": want "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05" (did you mean "2025-06-18"?)`}},
		{"protocol version not a string", srv(`"command": "x", "protocolVersion": 20260728`), []string{F + `$.mcpServers.a.protocolVersion: want string, got number`}},
		{"protocol version misspelt", srv(`"command": "x", "protocolversion": "2026-07-28"`), []string{F + `$.mcpServers.a.protocolversion: unknown field "protocolversion" (did you mean "protocolVersion"?)`}},
		{"stdio with bearer", srv(`"command": "x", "bearerTokenEnvVar": "TOKEN"`), []string{F + `$.mcpServers.a.bearerTokenEnvVar: "bearerTokenEnvVar" is only for http and sse servers; this server is stdio`}},
		{"http with stdio fields", srv(`"url": "https://h/", "args": [], "env": {}, "cwd": ""`), []string{
			F + `$.mcpServers.a.args: "args" is only for stdio servers; this server is http`,
			F + `$.mcpServers.a.env: "env" is only for stdio servers; this server is http`,
			F + `$.mcpServers.a.cwd: "cwd" is only for stdio servers; this server is http`,
		}},
		{"http type with command", srv(`"type": "streamable-http", "command": "x"`), []string{
			F + `$.mcpServers.a: an http server needs "url"; this server is http (type "streamable-http")`,
			F + `$.mcpServers.a.command: "command" is only for stdio servers; this server is http (type "streamable-http")`,
		}},
		{"sse without url", srv(`"type": "sse"`), []string{F + `$.mcpServers.a: an sse server needs "url"; this server is sse (type "sse")`}},

		// enabled and disabled.
		{"enabled contradicts disabled", srv(`"command": "x", "enabled": true, "disabled": true`), []string{F + `$.mcpServers.a.disabled: "disabled": true contradicts "enabled": true`}},
		{"disabled contradicts enabled", srv(`"command": "x", "disabled": false, "enabled": false`), []string{F + `$.mcpServers.a.disabled: "disabled": false contradicts "enabled": false`}},

		// Tool globs.
		{"bad glob", srv(`"command": "x", "enabledTools": ["ok_*", "["]`), []string{F + `$.mcpServers.a.enabledTools[1]: invalid glob "[": syntax error in pattern`}},
		{"bad glob escape", srv(`"command": "x", "disabledTools": ["a\\"]`), []string{F + `$.mcpServers.a.disabledTools[0]: invalid glob "a\\": syntax error in pattern`}},
		{"bad glob range", srv(`"command": "x", "disabledTools": ["[z-a"]`), []string{F + `$.mcpServers.a.disabledTools[0]: invalid glob "[z-a": syntax error in pattern`}},
		{"empty glob", srv(`"command": "x", "disabledTools": [""]`), []string{F + `$.mcpServers.a.disabledTools[0]: empty glob`}},
		{"glob type", srv(`"command": "x", "enabledTools": [1]`), []string{F + `$.mcpServers.a.enabledTools[0]: want string, got number`}},
		{"globs not array", srv(`"command": "x", "enabledTools": "*"`), []string{F + `$.mcpServers.a.enabledTools: want array of strings, got string`}},

		// Timeouts.
		{"timeout zero", srv(`"command": "x", "startupTimeoutMs": 0`), []string{F + `$.mcpServers.a.startupTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`}},
		{"timeout negative", srv(`"command": "x", "callTimeoutMs": -5`), []string{F + `$.mcpServers.a.callTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`}},
		{"timeout over 24h", srv(`"command": "x", "callTimeoutMs": 86400001`), []string{F + `$.mcpServers.a.callTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`}},
		{"timeout overflow", srv(`"command": "x", "callTimeoutMs": 99999999999999999999999`), []string{F + `$.mcpServers.a.callTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`}},
		{"timeout fraction", srv(`"command": "x", "callTimeoutMs": 1.5`), []string{F + `$.mcpServers.a.callTimeoutMs: want an integer number of milliseconds`}},
		{"timeout exponent", srv(`"command": "x", "callTimeoutMs": 1e4`), []string{F + `$.mcpServers.a.callTimeoutMs: want an integer number of milliseconds`}},
		{"timeout string", srv(`"command": "x", "startupTimeoutMs": "5000"`), []string{F + `$.mcpServers.a.startupTimeoutMs: want number, got string`}},

		// bearerTokenEnvVar.
		{"bearer empty", srv(`"url": "https://h/", "bearerTokenEnvVar": "EMPTY"`), []string{F + `$.mcpServers.a.bearerTokenEnvVar: environment variable "EMPTY" is empty`}},
		{"bearer newline", srv(`"url": "https://h/", "bearerTokenEnvVar": "NL"`), []string{F + `$.mcpServers.a.bearerTokenEnvVar: the value of environment variable "NL" cannot be sent in a header (it contains control characters)`}},
		{"bearer bad name", srv(`"url": "https://h/", "bearerTokenEnvVar": "${TOKEN}"`), []string{F + `$.mcpServers.a.bearerTokenEnvVar: invalid environment variable name "${TOKEN}": want letters, digits and '_', not starting with a digit`}},
		{"bearer and authorization", srv(`"url": "https://h/", "bearerTokenEnvVar": "TOKEN", "headers": {"authorization": "Basic x"}`), []string{F + `$.mcpServers.a.bearerTokenEnvVar: conflicts with the explicit "authorization" header; use one`}},

		// Prefixes.
		{"prefix with space", srv(`"command": "x", "prefix": "a b"`), []string{F + `$.mcpServers.a.prefix: invalid prefix "a b": a prefix is 1 to 32 characters from A-Z, a-z, 0-9, '_' and '-'`}},
		{"prefix with colon", srv(`"command": "x", "prefix": "a:b"`), []string{F + `$.mcpServers.a.prefix: invalid prefix "a:b": a prefix is 1 to 32 characters from A-Z, a-z, 0-9, '_' and '-'`}},
		{"prefix too long", srv(`"command": "x", "prefix": "` + strings.Repeat("p", 33) + `"`), []string{F + `$.mcpServers.a.prefix: invalid prefix "` + strings.Repeat("p", 33) + `": a prefix is 1 to 32 characters from A-Z, a-z, 0-9, '_' and '-'`}},
		{"prefix type", srv(`"command": "x", "prefix": null`), []string{F + `$.mcpServers.a.prefix: want string, got null`}},
		{"prefix clash with name", `{"mcpServers": {"a": {"command": "x", "prefix": "b"}, "b": {"command": "x"}}}`, []string{F + `$.mcpServers.b: prefix "b" is already used by server "a" (prefixes must be unique ignoring case)`}},
		{"explicit prefix clash ignoring case", `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x", "prefix": "A"}}}`, []string{F + `$.mcpServers.b.prefix: prefix "A" is already used by server "a" (prefixes must be unique ignoring case)`}},

		// Headers and env names.
		{"bad header name", srv(`"url": "https://h/", "headers": {"X Y": "1"}`), []string{F + `$.mcpServers.a.headers["X Y"]: invalid header name "X Y"`}},
		{"header names differing in case", srv(`"url": "https://h/", "headers": {"X-A": "1", "x-a": "2"}`), []string{F + `$.mcpServers.a.headers.x-a: duplicate header: "X-A" and "x-a" differ only in case`}},
		{"header value newline", srv(`"url": "https://h/", "headers": {"X": "a\r\nEvil: 1"}`), []string{F + `$.mcpServers.a.headers.X: header value contains control characters (such as a line break)`}},
		{"header value newline from env", srv(`"url": "https://h/", "headers": {"X": "${NL}"}`), []string{F + `$.mcpServers.a.headers.X: after expansion, header value contains control characters (such as a line break)`}},
		{"env name with =", srv(`"command": "x", "env": {"A=B": "1"}`), []string{F + `$.mcpServers.a.env["A=B"]: environment variable name contains "=" or a NUL byte`}},
		{"empty env name", srv(`"command": "x", "env": {"": "1"}`), []string{F + `$.mcpServers.a.env[""]: empty environment variable name`}},

		// Resolved values.
		{"empty command", srv(`"command": ""`), []string{F + `$.mcpServers.a.command: command is empty`}},
		{"command empty after expansion", srv(`"command": "${EMPTY:-}"`), []string{F + `$.mcpServers.a.command: after expansion, command is empty`}},
		{"NUL in arg", srv(`"command": "x", "args": ["a\u0000"]`), []string{F + `$.mcpServers.a.args[0]: contains a NUL byte`}},
		{"NUL in env", srv(`"command": "x", "env": {"K": "\u0000"}`), []string{F + `$.mcpServers.a.env.K: contains a NUL byte`}},
		{"NUL in cwd", srv(`"command": "x", "cwd": "/\u0000"`), []string{F + `$.mcpServers.a.cwd: contains a NUL byte`}},

		// References.
		{"VS Code input", `{"servers": {"a": {"url": "https://h/", "headers": {"Authorization": "Bearer ${input:token}"}}}, "inputs": [{"type": "promptString", "id": "token", "password": true}]}`, []string{F + `$.servers.a.headers.Authorization: "${input:token}" refers to a VS Code input; VS Code inputs are not supported: reference an environment variable as ${VAR} instead`}},
		{"VS Code env", srv(`"command": "x", "env": {"T": "${env:TOKEN}"}`), []string{F + `$.mcpServers.a.env.T: "${env:TOKEN}" is VS Code syntax; write ${TOKEN}`}},
		{"unterminated reference", srv(`"command": "x", "args": ["${"]`), []string{F + `$.mcpServers.a.args[0]: unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`}},
		{"empty reference", srv(`"command": "x", "args": ["${}"]`), []string{F + `$.mcpServers.a.args[0]: empty variable reference "${}"`}},
		{"digit reference", srv(`"command": "x", "args": ["${1X}"]`), []string{F + `$.mcpServers.a.args[0]: invalid variable reference "${1X}": a name is letters, digits and '_', not starting with a digit`}},
		{"POSIX default without colon", srv(`"command": "x", "args": ["${A-b}"]`), []string{F + `$.mcpServers.a.args[0]: invalid variable reference "${A-b}": a name is letters, digits and '_', not starting with a digit; for a default write ${A:-...}`}},
		{"nested default", srv(`"command": "x", "args": ["${A:-${B}}"]`), []string{F + `$.mcpServers.a.args[0]: the default in ${A:-...} contains "${": defaults are literal text and cannot reference variables`}},

		// VS Code inputs, checked strictly although unused.
		{"inputs not array", `{"servers": {}, "inputs": {}}`, []string{F + `$.inputs: want array, got object`}},
		{"input not object", `{"servers": {}, "inputs": ["token"]}`, []string{F + `$.inputs[0]: want object, got string`}},
		{"input unknown field", `{"servers": {}, "inputs": [{"id": "a", "type": "promptString", "secret": true}]}`, []string{F + `$.inputs[0].secret: unknown field "secret"`}},
		{"input without id", `{"servers": {}, "inputs": [{"type": "promptString"}]}`, []string{F + `$.inputs[0]: an input needs a non-empty "id"`}},
		{"input without type", `{"servers": {}, "inputs": [{"id": "a"}]}`, []string{F + `$.inputs[0]: an input needs a "type"`}},
		{"input bad type", `{"servers": {}, "inputs": [{"id": "a", "type": "prompt"}]}`, []string{F + `$.inputs[0].type: unknown input type "prompt": want "promptString", "pickString" or "command"`}},
		{"input duplicate id", `{"servers": {}, "inputs": [{"id": "a", "type": "promptString"}, {"id": "a", "type": "promptString"}]}`, []string{F + `$.inputs[1].id: duplicate input id "a"`}},
		{"input password type", `{"servers": {}, "inputs": [{"id": "a", "type": "promptString", "password": "yes"}]}`, []string{F + `$.inputs[0].password: want boolean, got string`}},
		{"input option unknown", `{"servers": {}, "inputs": [{"id": "a", "type": "pickString", "options": [{"label": "x", "val": "y"}]}]}`, []string{F + `$.inputs[0].options[0].val: unknown field "val" (did you mean "value"?)`}},
		{"input option type", `{"servers": {}, "inputs": [{"id": "a", "type": "pickString", "options": [1]}]}`, []string{F + `$.inputs[0].options[0]: want string or object, got number`}},

		// Several problems are all reported, in document order.
		{"several servers", `{"mcpServers": {"b": {"comand": "x"}, "a": {"command": "x", "args": [1]}}}`, []string{
			F + `$.mcpServers.b.comand: unknown field "comand" (did you mean "command"?)`,
			F + `$.mcpServers.a.args[0]: want string, got number`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErr(t, tt.src, env)
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), got); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorFields checks the structured form of an error.
func TestErrorFields(t *testing.T) {
	_, err := Parse([]byte(`{"mcpServers": {"gh": {"url": "https://h/", "bearerTokenEnvVar": "GH_TOKEN"}}}`), testFile, fakeEnv{"GH_TOKEN": ""}.opts())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	want := &Error{
		File:   testFile,
		Path:   "$.mcpServers.gh.bearerTokenEnvVar",
		Server: "gh",
		Msg:    `environment variable "GH_TOKEN" is empty`,
	}
	if diff := cmp.Diff(*want, *e, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Error mismatch (-want +got):\n%s", diff)
	}

	// Several problems are joined.
	_, err = Parse([]byte(`{"mcpServers": {"a": {"comand": "x"}, "b": {"comand": "x"}}}`), "", fakeEnv{}.opts())
	var list interface{ Unwrap() []error }
	if !errors.As(err, &list) || len(list.Unwrap()) != 2 {
		t.Errorf("want two joined errors, got %v", err)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "f.json", Path: "$.a", Msg: "m"}, "f.json: $.a: m"},
		{Error{Path: "$.a", Msg: "m"}, "$.a: m"},
		{Error{File: "f.json", Msg: "m"}, "f.json: m"},
		{Error{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestPathRendering(t *testing.T) {
	var root *jsonPath
	tests := []struct {
		p    *jsonPath
		want string
	}{
		{root, "$"},
		{root.k("mcpServers").k("x").k("args").i(2), "$.mcpServers.x.args[2]"},
		{root.k("mcpServers").k("gh:sub").k("url"), `$.mcpServers["gh:sub"].url`},
		{root.k("a.b"), `$["a.b"]`},
		{root.k("my-server_2"), `$.my-server_2`},
		{root.k("2fa"), `$["2fa"]`},
		{root.k("-x"), `$["-x"]`},
		{root.k(""), `$[""]`},
		{root.k("$schema"), `$.$schema`},
		{root.k("a\"b\n"), `$["a\"b\n"]`},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("path = %s, want %s", got, tt.want)
		}
	}
}

func TestTooDeep(t *testing.T) {
	src := `{"$schema": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `, "mcpServers": {}}`
	got := parseErr(t, src, nil)
	want := testFile + ": $.$schema" + strings.Repeat("[0]", 63) + ": nested more than 64 levels deep"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 30 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"s%d": {"comand": "x"}`, i)
	}
	b.WriteString(`}}`)
	got := strings.Split(parseErr(t, b.String(), nil), "\n")
	if len(got) != maxErrors+1 {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), maxErrors+1, strings.Join(got, "\n"))
	}
	if want := testFile + ": too many errors; stopped after 20"; got[maxErrors] != want {
		t.Errorf("last line = %q, want %q", got[maxErrors], want)
	}
}

func TestTooLarge(t *testing.T) {
	data := make([]byte, MaxFileSize+1)
	_, err := Parse(data, testFile, nil)
	if want := testFile + ": file is larger than 4 MiB"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
