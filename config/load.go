package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// LoadOptions configures Load and Parse. A nil *LoadOptions means the
// defaults documented on each field.
type LoadOptions struct {
	// LookupEnv resolves ${VAR} references and bearerTokenEnvVar.
	// nil means os.LookupEnv. Tests pass a fake so they never read or
	// write the process environment.
	LookupEnv func(name string) (value string, ok bool)
	// LookupCred resolves ${cred:NAME} references: the credential NAME,
	// kept apart from the configuration. nil means no credential is
	// stored: a server that references one is Unusable.
	LookupCred func(name string) (value string, ok bool)
}

func (o *LoadOptions) lookupEnv() func(string) (string, bool) {
	if o == nil || o.LookupEnv == nil {
		return os.LookupEnv
	}
	return o.LookupEnv
}

// Load reads and parses the configuration file at path (see [Parse]).
func Load(path string, opts *LoadOptions) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	data, err := bytesize.ReadAll(f, MaxFileSize)
	if err != nil {
		return nil, readError(path, err)
	}
	return Parse(data, path, opts)
}

// readError reports an unreadable file without repeating its path.
func readError(path string, err error) error {
	if errors.Is(err, bytesize.ErrTooLarge) {
		return &Error{File: path, Msg: "file is " + err.Error(), Err: err}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return &Error{File: path, Msg: "cannot read: " + msg, Err: err}
}

// Parse parses and validates a configuration. source names it in errors and
// becomes [Config.Source]: the file path, usually.
//
// The result has defaults applied, references expanded and servers sorted by
// name, and passes [Config.Validate]. On failure the error is a single
// [*Error] or, when there are several problems (up to 20), an errors.Join of
// them in document order; errors.As finds the first.
func Parse(data []byte, source string, opts *LoadOptions) (*Config, error) {
	env := opts.lookupEnv()
	var cred func(string) (string, bool)
	if opts != nil {
		cred = opts.LookupCred
	}
	lookup := func(name string) (string, bool) {
		if n, ok := strings.CutPrefix(name, credPrefix); ok {
			if cred == nil {
				return "", false
			}
			return cred(n)
		}
		return env(name)
	}
	return parse(data, source, lookup)
}

//go:embed default.json
var defaultJSON []byte

// defaultCommand is the placeholder command in default.json, replaced by
// Default. It is also what Default uses when the executable is unknown:
// "switchboard" found on $PATH.
const defaultCommand = "switchboard"

// Default returns the configuration used when there is no configuration file:
// one server, "demo", running Switchboard's own demo server from the
// executable self (pass os.Executable's result; "" means "switchboard" on
// $PATH). It is parsed from the embedded default.json through the same
// strict path as a configuration file, with DefaultSource as its Source.
func Default(self string) *Config {
	cfg, err := Parse(defaultJSON, DefaultSource, &LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		panic("config: embedded default.json is invalid: " + err.Error())
	}
	if self == "" {
		self = defaultCommand
	}
	for _, s := range cfg.Servers {
		if s.Command == defaultCommand {
			s.Command = self
			s.raw.command = escape(self)
		}
	}
	return cfg
}

// Home returns Switchboard's home directory: $SWITCHBOARD_HOME if set and
// non-empty (a relative path is relative to the working directory), else
// ".switchboard" in the user's home directory ($HOME; %USERPROFILE% on
// Windows). lookupEnv reads the environment; nil means os.LookupEnv. A
// --home flag, which the CLI parses, takes precedence over Home.
func Home(lookupEnv func(string) (string, bool)) (string, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if h, ok := lookupEnv(HomeEnv); ok && h != "" {
		return filepath.Clean(h), nil
	}
	key := "HOME"
	switch runtime.GOOS {
	case "windows":
		key = "USERPROFILE"
	case "plan9":
		key = "home"
	}
	if h, ok := lookupEnv(key); ok && h != "" {
		return filepath.Join(h, HomeDirName), nil
	}
	return "", fmt.Errorf("config: cannot find the home directory: neither $%s nor $%s is set", HomeEnv, key)
}

// Locate finds the configuration file. With explicitFile (a --config flag)
// non-empty it is that file, which must exist: Locate never falls back to
// the default for a file the user named. Otherwise it is FileName in home,
// and exists reports whether it is there; when it is not, the caller uses
// [Default].
//
// The CLI does:
//
//	path, exists, err := config.Locate(home, configFlag)
//	if err != nil { ... }
//	if !exists { cfg = config.Default(self) } else { cfg, err = config.Load(path, nil) }
func Locate(home, explicitFile string) (path string, exists bool, err error) {
	if explicitFile != "" {
		fi, err := os.Stat(explicitFile)
		switch {
		case err != nil:
			return explicitFile, false, fmt.Errorf("config: %w", err)
		case fi.IsDir():
			return explicitFile, false, fmt.Errorf("config: %s is a directory, not a file", explicitFile)
		}
		return explicitFile, true, nil
	}
	if home == "" {
		return "", false, errors.New("config: no home directory")
	}
	path = filepath.Join(home, FileName)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, false, nil
	case err != nil:
		return path, false, fmt.Errorf("config: %w", err)
	case fi.IsDir():
		return path, false, fmt.Errorf("config: %s is a directory, not a file", path)
	}
	return path, true, nil
}
