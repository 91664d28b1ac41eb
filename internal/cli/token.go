package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
)

// TokenFile is the file in Switchboard's home that keeps the token `serve`
// generated, so that the client configurations a person pasted from its
// banner still work after a restart.
const TokenFile = "token"

// keptToken returns the token kept in path, or generates one and keeps it
// there when there is none; created reports which. A file that group or
// others may read or change, or that holds no usable token, is an error
// that says what to do.
func keptToken(path string) (tok string, created bool, err error) {
	tok, err = readToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, false, err
	}
	if tok, err = frontdoor.GenerateToken(); err != nil {
		return "", false, err
	}
	switch err := writeToken(path, tok); {
	case errors.Is(err, fs.ErrExist): // another start kept one meanwhile
		tok, err = readToken(path)
		return tok, false, err
	case err != nil:
		return "", false, fmt.Errorf("keeping the generated token: %w", err)
	}
	return tok, true, nil
}

// readToken reads the token kept in path.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := confedit.CheckPrivate(path, fi, "the gateway's token"); err != nil {
		return "", fmt.Errorf("%w; removing the file has a new token generated", err)
	}
	b, err := bytesize.ReadAll(f, 1<<10)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if err := frontdoor.ValidateToken(tok); err != nil {
		return "", fmt.Errorf("%s: %v; remove the file to have a new token generated", path, err)
	}
	return tok, nil
}

// writeToken keeps tok in path, readable by its owner only. The file
// appears complete or not at all, and a file already there (kept by
// another start meanwhile) is left as it is: the error is then
// fs.ErrExist.
func writeToken(path, tok string) error {
	return confedit.WriteNew(path, []byte(tok+"\n"), 0o600)
}
