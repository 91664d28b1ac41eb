package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

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
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file; remove it to have a token generated", path)
	}
	// Windows has no such mode bits: the file is as private as the home.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("%s holds the gateway's token, but group or others may read or change it (mode %04o); "+
			"run 'chmod 600 %s', or remove the file to have a new token generated", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<10))
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
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".token-*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		err = os.Rename(tmp, path) // a file system without hard links
	}
	return err
}
