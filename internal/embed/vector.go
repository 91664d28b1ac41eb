package embed

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
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
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
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
	var out []Neighbour
	for id, v := range vecs {
		if len(v) != len(q) {
			continue
		}
		if s := Dot(q, v); s >= min && s > 0 {
			out = append(out, Neighbour{id, s})
		}
	}
	slices.SortFunc(out, func(a, b Neighbour) int {
		if a.Similarity != b.Similarity {
			if a.Similarity > b.Similarity {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
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
