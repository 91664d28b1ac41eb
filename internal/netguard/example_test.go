package netguard_test

import (
	"fmt"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

// A client for an untrusted remote server: check the configured URL once,
// then let the transport and the redirect policy check every connection.
func Example() {
	for _, u := range []string{
		"https://mcp.example.com/sse",
		"http://169.254.169.254/latest/meta-data/",
		"http://0x7f.1:6379/",
		"http://token:secret@mcp.example.com/",
	} {
		fmt.Println(netguard.CheckURL(u))
	}
	client := &http.Client{
		Transport:     netguard.Transport(nil),
		CheckRedirect: netguard.CheckRedirect,
	}
	_ = client // client.Get("https://mcp.example.com/sse") would dial only public addresses
	// Output:
	// <nil>
	// netguard: refused 169.254.169.254: metadata
	// netguard: refused 0x7f.1: loopback
	// netguard: refused mcp.example.com: userinfo
}
