// Package lockfile is Switchboard's shared, signed lockfile: for each
// server, the hash of its launch (and its package's exact version) and
// the hash of each tool, prompt and resource-template definition, signed
// with an Ed25519 key the team keeps (a detached JWS, EdDSA, over the
// lock's canonical JSON: go-jose does the cryptography). [Compare] names
// each difference between a lock and what runs. See docs/PINS.md.
//
// It does no I/O beyond what its callers hand it, and imports nothing of
// this module.
package lockfile

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// FormatVersion is the version of the format written.
const FormatVersion = 1

// Lock is what a lockfile pins.
type Lock struct {
	Version int               `json:"version"`
	Servers map[string]Server `json:"servers"`
}

// Server is what a lockfile pins of one server.
type Server struct {
	// Launch is the hash of the server's launch (config.Launch, package
	// included).
	Launch string `json:"launch"`
	// Package is its npx-style launch's package, when it has one.
	Package *Package `json:"package,omitempty"`
	// Instructions is the hash of the server's instructions; "" for none.
	Instructions string `json:"instructions,omitempty"`
	// Tools, Prompts and Templates map each name (a template's name) to
	// the hash of its canonical definition (internal/drift).
	Tools     map[string]string `json:"tools,omitempty"`
	Prompts   map[string]string `json:"prompts,omitempty"`
	Templates map[string]string `json:"templates,omitempty"`
}

// Package is a package pinned to an exact version.
type Package struct {
	Registry  string `json:"registry"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
}

// file is a lockfile on disk: the lock and its signature.
type file struct {
	Version   int               `json:"version"`
	Servers   map[string]Server `json:"servers"`
	Signature string            `json:"signature"`
}

// Canonical is the JSON that is signed: object keys in a fixed order
// (maps sorted), no insignificant whitespace.
func (l *Lock) Canonical() []byte {
	b, _ := json.Marshal(l) // strings and maps of strings: cannot fail
	return b
}

// Sign returns the lockfile of l signed with the private key priv (a JWK
// as NewKey writes it): the lock, indented, with "signature" the detached
// compact JWS of its canonical JSON.
func Sign(l *Lock, priv []byte) ([]byte, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(priv); err != nil {
		return nil, fmt.Errorf("lockfile: the private key: %w", err)
	}
	key, ok := jwk.Key.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("lockfile: the private key is not an Ed25519 private key")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: key, KeyID: jwk.KeyID}}, nil)
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	l.Version = FormatVersion
	sig, err := signer.Sign(l.Canonical())
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	detached, err := sig.DetachedCompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	out, err := json.MarshalIndent(file{Version: l.Version, Servers: l.Servers, Signature: detached}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	return append(out, '\n'), nil
}

// ErrSignature is a lockfile whose signature does not verify with the
// public key: it was changed, or signed with another key.
var ErrSignature = errors.New("lockfile: the signature does not verify: the lockfile was changed after it was signed, or signed with another key")

// Read parses a lockfile and verifies its signature with the public key
// pub (a JWK). Unknown fields are refused: nothing unsigned is read.
func Read(data, pub []byte) (*Lock, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(pub); err != nil {
		return nil, fmt.Errorf("lockfile: the public key: %w", err)
	}
	key, ok := jwk.Key.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("lockfile: the public key is not an Ed25519 public key")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("lockfile: version %d, want %d", f.Version, FormatVersion)
	}
	if f.Signature == "" {
		return nil, errors.New("lockfile: not signed")
	}
	l := &Lock{Version: f.Version, Servers: f.Servers}
	sig, err := jose.ParseDetached(f.Signature, l.Canonical(), []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrSignature, err)
	}
	if _, err := sig.Verify(key); err != nil {
		return nil, ErrSignature
	}
	return l, nil
}

// NewKey makes an Ed25519 key pair, as JWKs: the private key (to keep
// secret) and the public key.
func NewKey() (priv, pub []byte, err error) {
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	pubJWK := jose.JSONWebKey{Key: pk, Algorithm: string(jose.EdDSA), Use: "sig"}
	thumb, err := pubJWK.Thumbprint(cryptoSHA256)
	if err != nil {
		return nil, nil, err
	}
	pubJWK.KeyID = fmt.Sprintf("%x", thumb[:8])
	privJWK := jose.JSONWebKey{Key: sk, KeyID: pubJWK.KeyID, Algorithm: string(jose.EdDSA), Use: "sig"}
	if priv, err = json.MarshalIndent(privJWK, "", "  "); err != nil {
		return nil, nil, err
	}
	if pub, err = json.MarshalIndent(pubJWK, "", "  "); err != nil {
		return nil, nil, err
	}
	return append(priv, '\n'), append(pub, '\n'), nil
}

// Difference is one way in which what runs differs from a lock.
type Difference struct {
	Server string `json:"server"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Item names the tool, prompt or template; "" otherwise.
	Item string `json:"item,omitempty"`
	// Want is what the lock says, Got what runs (hashes, or versions).
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
}

// The kinds of Difference.
const (
	KindServerMissing       = "server_missing"       // in the lock, not running
	KindServerExtra         = "server_extra"         // running, not in the lock
	KindLaunchChanged       = "launch_changed"       // its launch differs
	KindPackageChanged      = "package_changed"      // its package's version (or integrity) differs
	KindInstructionsChanged = "instructions_changed" // its instructions differ
	KindToolAdded           = "tool_added"
	KindToolRemoved         = "tool_removed"
	KindToolChanged         = "tool_changed"
	KindPromptAdded         = "prompt_added"
	KindPromptRemoved       = "prompt_removed"
	KindPromptChanged       = "prompt_changed"
	KindTemplateAdded       = "template_added"
	KindTemplateRemoved     = "template_removed"
	KindTemplateChanged     = "template_changed"
)

// String reads as a sentence for people.
func (d Difference) String() string {
	s := fmt.Sprintf("server %q: %s", d.Server, strings.ReplaceAll(d.Kind, "_", " "))
	if d.Item != "" {
		s = fmt.Sprintf("server %q: %s %q %s", d.Server, strings.SplitN(d.Kind, "_", 2)[0], d.Item, strings.SplitN(d.Kind, "_", 2)[1])
	}
	if d.Want != "" || d.Got != "" {
		s += fmt.Sprintf(" (%s → %s)", orNone(d.Want), orNone(d.Got))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Compare returns each difference between the lock want and got (what
// runs), sorted by server, then kind and item.
func Compare(want, got *Lock) []Difference {
	var out []Difference
	for _, name := range slices.Sorted(maps.Keys(want.Servers)) {
		w := want.Servers[name]
		g, ok := got.Servers[name]
		if !ok {
			out = append(out, Difference{Server: name, Kind: KindServerMissing})
			continue
		}
		if w.Package != nil && g.Package != nil && *w.Package != *g.Package {
			out = append(out, Difference{Server: name, Kind: KindPackageChanged, Want: w.Package.Name + "@" + w.Package.Version, Got: g.Package.Name + "@" + g.Package.Version})
		} else if w.Launch != g.Launch {
			out = append(out, Difference{Server: name, Kind: KindLaunchChanged, Want: w.Launch, Got: g.Launch})
		}
		if w.Instructions != g.Instructions {
			out = append(out, Difference{Server: name, Kind: KindInstructionsChanged, Want: w.Instructions, Got: g.Instructions})
		}
		out = append(out, compareSet(name, "tool", w.Tools, g.Tools)...)
		out = append(out, compareSet(name, "prompt", w.Prompts, g.Prompts)...)
		out = append(out, compareSet(name, "template", w.Templates, g.Templates)...)
	}
	for _, name := range slices.Sorted(maps.Keys(got.Servers)) {
		if _, ok := want.Servers[name]; !ok {
			out = append(out, Difference{Server: name, Kind: KindServerExtra})
		}
	}
	return out
}

func compareSet(server, what string, want, got map[string]string) []Difference {
	var out []Difference
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[name]
		switch {
		case !ok:
			out = append(out, Difference{Server: server, Kind: what + "_removed", Item: name})
		case g != want[name]:
			out = append(out, Difference{Server: server, Kind: what + "_changed", Item: name, Want: want[name], Got: g})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			out = append(out, Difference{Server: server, Kind: what + "_added", Item: name})
		}
	}
	return out
}

// cryptoSHA256 is the hash of a key's thumbprint (RFC 7638).
const cryptoSHA256 = crypto.SHA256
