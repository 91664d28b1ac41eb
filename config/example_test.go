package config_test

import (
	"fmt"
	"log"

	"github.com/switchboard-mcp/switchboard/config"
)

func ExampleParse() {
	src := []byte(`{
	  "mcpServers": {
	    "github": {
	      "url": "https://api.githubcopilot.com/mcp/",
	      "bearerTokenEnvVar": "GITHUB_TOKEN",
	      "disabledTools": ["delete_*"]
	    },
	    "files": {
	      "command": "npx",
	      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/src"],
	      "prefix": "fs"
	    }
	  }
	}`)
	env := map[string]string{"GITHUB_TOKEN": "ghp_example", "HOME": "/home/u"}
	cfg, err := config.Parse(src, "config.json", &config.LoadOptions{
		LookupEnv: func(name string) (string, bool) { v, ok := env[name]; return v, ok },
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range cfg.Servers {
		fmt.Println(s) // never prints values
	}
	fmt.Println(cfg.Server("files").Args[2])
	gh := cfg.Server("github")
	fmt.Println(gh.Transport, gh.SecretRefs, gh.DisabledTools, gh.CallTimeout)
	// Output:
	// server "files": stdio, enabled, prefix "fs"
	// server "github": http, enabled, prefix "github"
	// /home/u/src
	// http [GITHUB_TOKEN] [delete_*] 1m0s
}

func ExampleParse_error() {
	_, err := config.Parse([]byte(`{"mcpServers": {"github": {"comand": "npx"}}}`), "/home/u/.switchboard/config.json", nil)
	fmt.Println(err)
	// Output:
	// /home/u/.switchboard/config.json: $.mcpServers.github.comand: unknown field "comand" (did you mean "command"?)
}
