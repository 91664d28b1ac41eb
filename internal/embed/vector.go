package embed

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Unit returns v scaled to unit length, so that the cosine similarity of
// two unit vectors is their dot product; nil for a zero vector or one with
// a value that is not finite.
func Unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil
		}
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return nil
	}
	n := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * n)
	}
	return out
}

// Dot is the dot product of a and b, over the shorter of the two: the
// cosine similarity of unit vectors.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	// Four sums apart, so that the additions do not wait on each other;
	// the slices advance rather than an index, so that no bound is
	// checked.
	var s0, s1, s2, s3 float32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		a, b = a[4:], b[4:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Neighbour is one vector near a query.
type Neighbour struct {
	ID         string
	Similarity float32 // cosine similarity, -1 to 1
}

// Nearest returns the n entries of vecs (unit vectors, by ID) most
// similar to the unit vector q, most similar first (ties by ID), leaving
// out those below min, those with no similarity at all (0 or less) and
// those of another length than q.
func Nearest(q []float32, vecs map[string][]float32, min float32, n int) []Neighbour {
	if n <= 0 || len(q) == 0 {
		return nil
	}
	// The n best so far, in a min-heap on (similarity, then ID reversed):
	// the root is the one to drop first.
	h := make([]Neighbour, 0, n)
	for id, v := range vecs {
		if len(v) != len(q) {
			continue
		}
		s := Dot(q, v)
		if s < min || s <= 0 {
			continue
		}
		nb := Neighbour{id, s}
		switch {
		case len(h) < n:
			h = append(h, nb)
			up(h, len(h)-1)
		case better(nb, h[0]):
			h[0] = nb
			down(h, 0)
		}
	}
	slices.SortFunc(h, func(a, b Neighbour) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return h
}

// better orders neighbours: more similar first, then by ID.
func better(a, b Neighbour) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity > b.Similarity
	}
	return a.ID < b.ID
}

// up and down keep h a heap whose root is the worst neighbour.
func up(h []Neighbour, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func down(h []Neighbour, i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && better(h[w], h[c]) {
				w = c
			}
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// Encode is v as little-endian IEEE 754 float32 values, as the store keeps
// it.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode is the inverse of Encode.
func Decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 || len(b) == 0 || len(b) > 4*MaxDimensions {
		return nil, fmt.Errorf("embed: a stored vector of %d bytes", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
