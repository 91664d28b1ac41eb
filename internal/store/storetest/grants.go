package storetest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func grantKeeper(t *testing.T, db store.Store) store.GrantKeeper {
	t.Helper()
	k, ok := db.(store.GrantKeeper)
	if !ok {
		t.Fatalf("%T is no store.GrantKeeper", db)
	}
	return k
}

// testGrants: each caller's grants are kept apart, replaced by key, listed
// newest first, listed without their sealed values for the status page,
// and deleted per caller or for every caller.
func testGrants(t *testing.T, open Opener) {
	db := open(t, Options{})
	k := grantKeeper(t, db)
	ctx := t.Context()
	const res = "https://mcp.example.com/mcp"
	ann := store.Grant{GrantKey: store.GrantKey{Caller: "ann", Issuer: "https://as", Resource: res, ClientID: "c1"}, Sealed: []byte("ann-1"), Subject: "ann@gh", SavedAt: When}
	bob := store.Grant{GrantKey: store.GrantKey{Caller: "sub:bob", Issuer: "https://as", Resource: res, ClientID: "c1"}, Sealed: []byte("bob-1"), Subject: "bob@gh", SavedAt: When}
	other := store.Grant{GrantKey: store.GrantKey{Caller: "ann", Issuer: "https://as", Resource: "https://other/mcp", ClientID: "c1"}, Sealed: []byte("ann-other"), SavedAt: When}
	for _, g := range []store.Grant{ann, bob, other} {
		if err := k.SaveGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	got, err := k.Grants(ctx, "ann", res)
	if err != nil || len(got) != 1 || !bytes.Equal(got[0].Sealed, []byte("ann-1")) || got[0].Subject != "ann@gh" || !got[0].SavedAt.Equal(When) {
		t.Fatalf("Grants(ann) = %+v, %v; want ann's one grant", got, err)
	}
	ann.Sealed, ann.SavedAt = []byte("ann-2"), When.Add(time.Minute)
	if err := k.SaveGrant(ctx, ann); err != nil {
		t.Fatal(err)
	}
	newer := ann
	newer.ClientID, newer.Sealed, newer.SavedAt = "c2", []byte("ann-c2"), When.Add(2*time.Minute)
	if err := k.SaveGrant(ctx, newer); err != nil {
		t.Fatal(err)
	}
	got, err = k.Grants(ctx, "ann", res)
	if err != nil || len(got) != 2 || string(got[0].Sealed) != "ann-c2" || string(got[1].Sealed) != "ann-2" {
		t.Fatalf("Grants(ann) after saves = %+v, %v; want c2's then c1's replaced grant", got, err)
	}
	holders, err := k.GrantHolders(ctx, res)
	if err != nil || len(holders) != 3 || holders[0].Caller != "ann" || holders[2].Caller != "sub:bob" || holders[2].Subject != "bob@gh" {
		t.Fatalf("GrantHolders = %+v, %v", holders, err)
	}
	for _, h := range holders {
		if h.Sealed != nil {
			t.Fatalf("GrantHolders returned a sealed grant: %+v", h)
		}
	}
	if n, err := k.DeleteGrants(ctx, "ann", res); err != nil || n != 2 {
		t.Fatalf("DeleteGrants(ann) = %d, %v; want 2", n, err)
	}
	if got, _ := k.Grants(ctx, "sub:bob", res); len(got) != 1 {
		t.Fatalf("bob's grant went with ann's: %+v", got)
	}
	if got, _ := k.Grants(ctx, "ann", "https://other/mcp"); len(got) != 1 {
		t.Fatalf("ann's grant for another resource went too: %+v", got)
	}
	if n, err := k.DeleteGrants(ctx, "", res); err != nil || n != 1 {
		t.Fatalf("DeleteGrants(every caller) = %d, %v; want 1", n, err)
	}
	if n, err := k.DeleteGrants(ctx, "", res); err != nil || n != 0 {
		t.Fatalf("DeleteGrants again = %d, %v; want 0", n, err)
	}
}

// testGrantLease: one holder at a time leases a grant's refresh, among
// concurrent claims too; the lease ends at its time or when the grant is
// saved; a grant that does not exist, or was saved again since it was
// read, cannot be leased.
func testGrantLease(t *testing.T, open Opener) {
	db := open(t, Options{})
	k := grantKeeper(t, db)
	ctx := t.Context()
	g := store.Grant{GrantKey: store.GrantKey{Caller: "ann", Issuer: "https://as", Resource: "https://mcp/", ClientID: "c"}, Sealed: []byte("x"), SavedAt: When}
	if ok, err := k.LeaseGrant(ctx, g.GrantKey, When, "p1", When, When.Add(time.Minute)); err != nil || ok {
		t.Fatalf("lease of a missing grant = %v, %v; want false", ok, err)
	}
	if err := k.SaveGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	const n = 8
	wins := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ok, err := k.LeaseGrant(ctx, g.GrantKey, When, string(rune('a'+i)), When, When.Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			wins[i] = ok
		})
	}
	wg.Wait()
	won := 0
	for _, w := range wins {
		if w {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent leases won; want 1", won, n)
	}
	if ok, _ := k.LeaseGrant(ctx, g.GrantKey, When, "late", When.Add(30*time.Second), When.Add(2*time.Minute)); ok {
		t.Fatal("a lease was taken while another ran")
	}
	if ok, _ := k.LeaseGrant(ctx, g.GrantKey, When, "late", When.Add(time.Minute), When.Add(2*time.Minute)); !ok {
		t.Fatal("a lease could not be taken once the last one ended")
	}
	g.SavedAt = When.Add(time.Second) // renewed by the lease's holder
	if err := k.SaveGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	if ok, _ := k.LeaseGrant(ctx, g.GrantKey, When, "p2", When.Add(time.Minute), When.Add(2*time.Minute)); ok {
		t.Fatal("a lease was taken on the grant as it was before it was renewed")
	}
	if ok, _ := k.LeaseGrant(ctx, g.GrantKey, g.SavedAt, "p2", When.Add(time.Minute), When.Add(2*time.Minute)); !ok {
		t.Fatal("saving the grant did not end its lease")
	}
}
