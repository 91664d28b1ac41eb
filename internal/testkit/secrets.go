package testkit

import (
	"context"
	"encoding/base64"
	"hash/crc32"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RevealToken is a GitHub token, fake, with a valid checksum; RevealJWT a
// JWT, fake, whose header names its alg; RevealDSN a connection string
// whose password is shaped like a secret, not verified. The "reveal" tool
// of ModeSecrets returns them.
var (
	RevealToken = githubToken("Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9")
	RevealJWT   = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"svc-deploy","exp":1999999999}`)) + ".dGhlLXNpZ25hdHVyZS1vZi10aGUtdG9rZW4tMDEyMzQ1"
	RevealDSN = "postgres://app:Vx9mQ2zzK7@db.internal:5432/app"
)

// RevealText is the text block of the reveal tool's result.
func RevealText() string {
	return "Ticket #4411: please use token " + RevealToken + " and session " + RevealJWT + "; db " + RevealDSN + ". Thanks!"
}

// RevealOut is the reveal tool's structured result.
type RevealOut struct {
	Token   string `json:"token"`
	Session string `json:"session"`
	Note    string `json:"note"`
}

// addReveal adds the "reveal" tool to s: a support ticket that holds a
// GitHub token, a JWT and a database password, in a text block and in
// structuredContent; and the same ticket as the resource test://ticket.
func addReveal(s *mcp.Server) {
	s.AddResource(&mcp.Resource{URI: "test://ticket", Name: "ticket", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://ticket", MIMEType: "text/plain", Text: RevealText()}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "reveal", Description: "Reads a support ticket."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, RevealOut, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: RevealText()}}},
			RevealOut{Token: RevealToken, Session: "Bearer " + RevealJWT, Note: "no secret here"}, nil
	})
}

// githubToken is "ghp_" + body (30 characters) + the CRC32 of body in six
// base62 digits, as GitHub writes its tokens.
func githubToken(body string) string {
	const b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(body))
	var c [6]byte
	for i := 5; i >= 0; i-- {
		c[i] = b62[n%62]
		n /= 62
	}
	return "ghp_" + body + string(c[:])
}
