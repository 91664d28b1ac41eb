// Package seal encrypts small secrets at rest (AES-256-GCM) with keys the
// operator holds, so that what a shared store keeps (each caller's OAuth
// grants) is of no use to whoever reads the database alone. A Keyring
// holds one or more keys: the first seals, every one opens, so a key is
// rotated by putting the new one first and dropping the old one once
// nothing sealed with it is kept. A sealed value names its key (the first
// bytes of the key's SHA-256), and is bound to a context (associated
// data) that the caller chooses, such as whose it is: a value moved to
// another context does not open. Leaf: the standard library only.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// version starts every sealed value.
const version = 1

// idSize is the length of a key's ID in a sealed value.
const idSize = 4

// ErrUnknownKey is returned by Open for a value sealed with a key the
// keyring does not hold (a key rotated out).
var ErrUnknownKey = errors.New("seal: sealed with a key that is no longer configured")

// ErrOpen is returned by Open for a value that does not open: damaged, or
// sealed for another context.
var ErrOpen = errors.New("seal: the value does not open")

// A Keyring seals with its first key and opens with any of them.
type Keyring struct {
	keys []key
}

type key struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// Parse reads a keyring: keys in standard or URL-safe base64 (padded or
// not), each of KeySize bytes, separated by commas or white space, the
// one that seals first. The error never quotes a key.
func Parse(s string) (*Keyring, error) {
	var raws [][]byte
	for i, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		b, err := decode(f)
		if err != nil || len(b) != KeySize {
			return nil, fmt.Errorf("seal: key %d is not %d bytes in base64 (make one with: openssl rand -base64 32)", i+1, KeySize)
		}
		raws = append(raws, b)
	}
	if len(raws) == 0 {
		return nil, errors.New("seal: no key")
	}
	return New(raws...)
}

func decode(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// New returns the keyring of raw keys, each KeySize bytes; the first
// seals.
func New(raw ...[]byte) (*Keyring, error) {
	if len(raw) == 0 {
		return nil, errors.New("seal: no key")
	}
	k := &Keyring{}
	for i, r := range raw {
		if len(r) != KeySize {
			return nil, fmt.Errorf("seal: key %d is %d bytes; want %d", i+1, len(r), KeySize)
		}
		block, err := aes.NewCipher(r)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(r)
		var id [idSize]byte
		copy(id[:], sum[:idSize])
		k.keys = append(k.keys, key{id: id, aead: aead})
	}
	return k, nil
}

// Seal encrypts plain for context with the first key.
func (k *Keyring) Seal(plain, context []byte) []byte {
	first := k.keys[0]
	out := make([]byte, 1+idSize, 1+idSize+first.aead.NonceSize()+len(plain)+first.aead.Overhead())
	out[0] = version
	copy(out[1:], first.id[:])
	nonce := make([]byte, first.aead.NonceSize())
	rand.Read(nonce) //nolint:errcheck // crypto/rand.Read does not fail
	out = append(out, nonce...)
	return first.aead.Seal(out, nonce, plain, context)
}

// Open decrypts what Seal made for the same context. It reports
// ErrUnknownKey or ErrOpen when it cannot.
func (k *Keyring) Open(sealed, context []byte) ([]byte, error) {
	if len(sealed) < 1+idSize || sealed[0] != version {
		return nil, ErrOpen
	}
	id := sealed[1 : 1+idSize]
	for _, kk := range k.keys {
		if !bytes.Equal(kk.id[:], id) {
			continue
		}
		rest := sealed[1+idSize:]
		if len(rest) < kk.aead.NonceSize() {
			return nil, ErrOpen
		}
		plain, err := kk.aead.Open(nil, rest[:kk.aead.NonceSize()], rest[kk.aead.NonceSize():], context)
		if err != nil {
			return nil, ErrOpen
		}
		return plain, nil
	}
	return nil, ErrUnknownKey
}

// Current reports whether sealed was sealed with the key that seals now:
// a value that is not should be sealed again.
func (k *Keyring) Current(sealed []byte) bool {
	return len(sealed) >= 1+idSize && bytes.Equal(sealed[1:1+idSize], k.keys[0].id[:])
}
