package storetest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// testSecret: a named secret is made on first use, SecretSize bytes, the
// same on every later call, and apart from other names; concurrent first
// calls all get the one that was kept.
func testSecret(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()
	a, err := db.Secret(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != store.SecretSize || bytes.Equal(a, make([]byte, store.SecretSize)) {
		t.Fatalf("Secret = %x; want %d random bytes", a, store.SecretSize)
	}
	again, err := db.Secret(ctx, "a")
	if err != nil || !bytes.Equal(again, a) {
		t.Errorf("Secret again = %x, %v; want %x", again, err, a)
	}
	b, err := db.Secret(ctx, "b")
	if err != nil || bytes.Equal(b, a) {
		t.Errorf("Secret of another name = %x, %v; want one of its own", b, err)
	}

	const n = 8
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = db.Secret(ctx, "race") })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Secret: %v", errs[i])
		}
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("concurrent first calls got %x and %x; want one secret", got[0], got[i])
		}
	}
}
