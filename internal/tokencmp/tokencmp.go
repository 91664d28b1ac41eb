// Package tokencmp is the one comparison of secrets that a request
// presents (bearer tokens, session and CSRF tokens, OAuth state) with the
// ones expected: by their SHA-256 sums in constant time, so that neither
// the content nor the length of either affects how long a comparison
// takes, and an empty expected secret matches nothing. It imports nothing
// from Switchboard.
package tokencmp

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Sum is the SHA-256 of a secret: what a holder may keep instead of the
// secret itself.
type Sum [sha256.Size]byte

// SumOf returns the sum of s.
func SumOf(s string) Sum { return sha256.Sum256([]byte(s)) }

// Matches reports whether got is the secret whose sum is want.
func (want *Sum) Matches(got string) bool {
	g := SumOf(got)
	return subtle.ConstantTimeCompare(g[:], want[:]) == 1
}

// Equal reports whether got is want; never when want is empty.
func Equal(got, want string) bool {
	if want == "" {
		return false
	}
	w := SumOf(want)
	return w.Matches(got)
}
