// Package config loads and validates Switchboard's server configuration: which
// MCP servers the host connects to, how, and what it exposes from each.
//
// It is public so that Go agent authors can load the same files Switchboard
// does.
//
// # Where the file is
//
// Switchboard reads $SWITCHBOARD_HOME/config.json; the home defaults to
// ~/.switchboard. The CLI's --home and --config flags override both: it calls
// [Home] when --home is absent, then [Locate], and uses [Default] when there
// is no file (but never when --config names a missing file).
//
// # Accepted shapes
//
// The file uses the de facto "mcpServers" shape of Claude Desktop, Claude
// Code (.mcp.json), Cursor and Windsurf, or VS Code's "servers" shape (with
// an optional "inputs" array); not both at once. An optional "$schema"
// string is allowed at the top level.
//
//	{
//	  "mcpServers": {
//	    "github": {
//	      "url": "https://api.githubcopilot.com/mcp/",
//	      "bearerTokenEnvVar": "GITHUB_TOKEN",
//	      "disabledTools": ["delete_*"]
//	    },
//	    "files": {
//	      "command": "npx",
//	      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/src"],
//	      "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"},
//	      "prefix": "fs"
//	    }
//	  }
//	}
//
// Per server:
//
//   - type: "stdio", "http" (Streamable HTTP) or "sse" (the deprecated
//     HTTP+SSE transport), ignoring case. "streamable-http", "streamableHttp",
//     "streamable_http" and "streamable" mean http; "local" (opencode's word)
//     means stdio. Without type, "command" means stdio and "url" means http.
//   - command, args, env, cwd: a stdio server's process. Only for stdio.
//   - runtime: the runtimes the server needs, with optional version
//     requirements ({"node": ">=20"}; see [Runtimes]), checked before
//     launch. Only for stdio.
//   - url (or Windsurf's "serverUrl"), headers: an http or sse server's
//     endpoint. Only for http and sse. The URL must be http or https with a
//     host, and may carry neither credentials (user:pw@) nor a fragment.
//   - enabled (default true), or Cline's and Windsurf's "disabled": its
//     inverse. Both may be given only if they agree.
//   - enabledTools, disabledTools: path.Match globs over the server's tool
//     names. See [Server] for how they combine.
//   - startupTimeoutMs (default 10000), callTimeoutMs (default 60000):
//     integers from 1 to 86400000 (24h).
//   - bearerTokenEnvVar (http and sse only): the name of an environment
//     variable whose value is sent as "Authorization: Bearer <value>". The
//     variable must be set and non-empty, and an explicit Authorization
//     header is then an error.
//   - protocolVersion: pins the MCP protocol version spoken to the server:
//     "2026-07-28" (the sessionless era; stdio and http only) or a legacy
//     one, "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05".
//     Without it Switchboard chooses: a stdio server is probed for
//     2026-07-28 and falls back to initialize; an http server negotiates;
//     an sse server is legacy.
//   - prefix: the namespace of the server's tools in model-facing names;
//     default the server name. "" means pass-through (tool names are not
//     prefixed). Otherwise 1 to 32 characters from [A-Za-z0-9_-], unique
//     among servers ignoring case. A server whose name is not a valid
//     prefix (it contains ':' or '.', or is long) and that sets none gets
//     one derived from its name: other characters become '_' ("gh:sub"
//     gives "gh_sub"), and if another server has that prefix, '_' and
//     eight hex digits of a SHA-256 of the name follow. The result depends
//     only on the set of servers, not on their order.
//
// Server names are 1 to 64 bytes of printable characters without whitespace;
// colons are allowed ("gh:sub"). Names must be unique ignoring case.
//
// # Strictness
//
// Unknown fields are errors at every level, as are wrong types, duplicate
// keys within an object, and every rule above. Each error names the file and
// the JSON path of the offending value:
//
//	/home/u/.switchboard/config.json: $.mcpServers.github.comand: unknown field "comand" (did you mean "command"?)
//	/home/u/.switchboard/config.json: $.mcpServers.x.args[2]: want string, got number
//
// # Variables
//
// Secrets are named, never inlined. command, args, cwd, url and the values
// of env and headers may reference the process environment:
//
//	${VAR}           the value of VAR; the server is unusable if VAR is not set
//	${VAR:-default}  the value of VAR, or default if VAR is unset or empty;
//	                 default is literal text (possibly empty) without "}"
//	${cred:NAME}     the credential NAME, kept apart from the configuration
//	                 ([LoadOptions].LookupCred; in the CLI, creds.json in
//	                 Switchboard's home); the server is unusable if it is
//	                 not stored
//	$${              a literal "${"
//	$                any other "$" is literal
//
// VAR is [A-Za-z_][A-Za-z0-9_]*. A malformed reference ("${", "${}",
// "${1X}") is an error, and so is VS Code's "${input:id}" (inputs are not
// supported) and "${env:VAR}" (write "${VAR}"). Values are substituted
// once, never rescanned. [LoadOptions].LookupEnv resolves variables.
//
// A variable that is not set (through ${VAR} or bearerTokenEnvVar) does not
// fail loading: the server that references it is kept with
// [Server.Unusable] saying which variables and fields, e.g.
//
//	server "gh": ${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)
//
// and the other servers load. Besides server fields, a client's token
// references variables (unset: that client is unusable), and so do the
// store's PostgreSQL URL, the gateway's OAuth URLs and its public URL
// (unset: an error).
//
// Errors name variables, never their values, and so do String, GoString,
// LogValue and MarshalJSON of [Config] and [Server]; [Server.Redacted] shows
// a server as written, with references unexpanded.
//
// # Result
//
// [Load] and [Parse] return a [Config] whose Servers are sorted by name, with
// defaults (which live in this package's code) applied; it passes
// [Config.Validate].
package config
