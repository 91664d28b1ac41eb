package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// testEmbeddings: vectors are saved and read back by model and hash, a
// save replaces, models are kept apart, and a hash with no vector is left
// out of the answer rather than an error.
func testEmbeddings(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()
	if got, err := db.Embeddings(ctx, "m", []string{"h1"}); err != nil || len(got) != 0 {
		t.Fatalf("Embeddings on an empty store = %v, %v; want none, nil", got, err)
	}
	if got, err := db.Embeddings(ctx, "m", nil); err != nil || len(got) != 0 {
		t.Fatalf("Embeddings of no hashes = %v, %v; want none, nil", got, err)
	}
	a := store.Embedding{Model: "m", Hash: "h1", Vector: []byte{1, 2, 3, 4}, SavedAt: When}
	b := store.Embedding{Model: "m", Hash: "h2", Vector: []byte{0, 0, 0x80, 0x3f, 0xff}, SavedAt: When}
	other := store.Embedding{Model: "other", Hash: "h1", Vector: []byte{9}, SavedAt: When}
	if err := db.SaveEmbeddings(ctx, b, a, other); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveEmbeddings(ctx); err != nil {
		t.Fatalf("SaveEmbeddings of nothing: %v", err)
	}
	got, err := db.Embeddings(ctx, "m", []string{"h2", "missing", "h1", "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Embedding{a, b}, got); diff != "" {
		t.Errorf("Embeddings(m) (-want +got):\n%s", diff)
	}
	a2 := a
	a2.Vector = []byte{5, 6}
	if err := db.SaveEmbeddings(ctx, a2); err != nil {
		t.Fatal(err)
	}
	got, err = db.Embeddings(ctx, "m", []string{"h1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Embedding{a2}, got); diff != "" {
		t.Errorf("after a replace (-want +got):\n%s", diff)
	}
	got, err = db.Embeddings(ctx, "other", []string{"h1", "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Embedding{other}, got); diff != "" {
		t.Errorf("Embeddings(other) (-want +got):\n%s", diff)
	}
}

// testEmbeddingsMany: a lookup of more hashes than one statement takes
// finds them all.
func testEmbeddingsMany(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()
	var es []store.Embedding
	var hashes []string
	for i := range 1200 {
		h := fmt.Sprintf("sha256:%04d", i)
		hashes = append(hashes, h)
		if i%2 == 0 {
			es = append(es, store.Embedding{Model: "m", Hash: h, Vector: []byte{byte(i)}})
		}
	}
	if err := db.SaveEmbeddings(ctx, es...); err != nil {
		t.Fatal(err)
	}
	got, err := db.Embeddings(ctx, "m", hashes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(es) {
		t.Fatalf("Embeddings found %d, want %d", len(got), len(es))
	}
	for i, e := range got {
		if e.Hash != es[i].Hash || !cmp.Equal(e.Vector, es[i].Vector) || e.SavedAt.IsZero() {
			t.Fatalf("Embeddings[%d] = %+v, want %+v with a time", i, e, es[i])
		}
	}
}
