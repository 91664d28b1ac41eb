package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func loginKeeper(t *testing.T, db store.Store) store.LoginKeeper {
	t.Helper()
	k, ok := db.(store.LoginKeeper)
	if !ok {
		t.Fatalf("%T is no store.LoginKeeper", db)
	}
	return k
}

// testPendingLogins: a pending login is read back until it expires; its
// redirect is recorded once, not after it expired; taking it returns
// the redirect and forgets the login, and before the redirect came
// leaves it waiting; deleting one purges every expired login too.
func testPendingLogins(t *testing.T, open Opener) {
	db := open(t, Options{})
	k := loginKeeper(t, db)
	ctx := t.Context()
	exp := When.Add(5 * time.Minute)
	ann := store.PendingLogin{ID: "h-ann", Server: "gh", Caller: "sub:ann", Expires: exp}
	op := store.PendingLogin{ID: "h-op", Server: "gh", Expires: exp}
	old := store.PendingLogin{ID: "h-old", Server: "gh", Caller: "bob", Expires: When.Add(time.Minute)}
	for _, l := range []store.PendingLogin{ann, op, old} {
		if err := k.SavePendingLogin(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	got, err := k.PendingLogin(ctx, "h-ann", When)
	if err != nil || got.Server != "gh" || got.Caller != "sub:ann" || !got.Expires.Equal(exp) || got.Redirect != nil {
		t.Fatalf("PendingLogin(ann) = %+v, %v", got, err)
	}
	if _, err := k.PendingLogin(ctx, "h-ann", exp); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PendingLogin at its expiry: %v; want ErrNotFound", err)
	}
	if _, err := k.PendingLogin(ctx, "h-none", When); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PendingLogin of no login: %v; want ErrNotFound", err)
	}

	// Not yet arrived: taking leaves it waiting.
	if got, err := k.TakeLogin(ctx, "h-ann"); err != nil || got.Redirect != nil || got.Caller != "sub:ann" {
		t.Fatalf("TakeLogin before the redirect = %+v, %v; want the login without a redirect", got, err)
	}
	if err := k.ArriveLogin(ctx, "h-old", []byte("late"), When.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ArriveLogin after the expiry: %v; want ErrNotFound", err)
	}
	if err := k.ArriveLogin(ctx, "h-none", []byte("x"), When); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ArriveLogin of no login: %v; want ErrNotFound", err)
	}
	if err := k.ArriveLogin(ctx, "h-ann", []byte("sealed-1"), When); err != nil {
		t.Fatal(err)
	}
	if err := k.ArriveLogin(ctx, "h-ann", []byte("sealed-2"), When); !errors.Is(err, store.ErrLoginArrived) {
		t.Fatalf("a second ArriveLogin: %v; want ErrLoginArrived", err)
	}
	got, err = k.TakeLogin(ctx, "h-ann")
	if err != nil || string(got.Redirect) != "sealed-1" || got.Caller != "sub:ann" || got.Server != "gh" {
		t.Fatalf("TakeLogin = %+v, %v; want the first redirect", got, err)
	}
	if _, err := k.TakeLogin(ctx, "h-ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TakeLogin once more: %v; want ErrNotFound", err)
	}
	if err := k.ArriveLogin(ctx, "h-ann", []byte("sealed-3"), When); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ArriveLogin after the take: %v; want ErrNotFound", err)
	}
	// Delete purges the expired.
	if err := k.SavePendingLogin(ctx, op); err != nil {
		t.Fatal(err)
	}
	if err := k.DeletePendingLogin(ctx, "h-op", When.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"h-op", "h-old"} {
		if _, err := k.TakeLogin(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TakeLogin(%s) after the delete: %v; want ErrNotFound", id, err)
		}
	}
}

// testPendingLoginOnce: of redirects recorded at once for one login, one
// is taken.
func testPendingLoginOnce(t *testing.T, open Opener) {
	db := open(t, Options{})
	k := loginKeeper(t, db)
	ctx := t.Context()
	if err := k.SavePendingLogin(ctx, store.PendingLogin{ID: "h", Server: "gh", Caller: "ann", Expires: When.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = k.ArriveLogin(ctx, "h", []byte{byte(i)}, When) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrLoginArrived):
			t.Errorf("ArriveLogin: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d redirects recorded; want 1", won)
	}
}
