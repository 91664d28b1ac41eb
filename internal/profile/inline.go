package profile

import (
	"net/url"
	"strconv"
	"strings"
)

// Keyword classes of JSON Schema (draft-07, 2019-09 and 2020-12, since
// servers emit all three): which values are schemas that a walk must
// enter. Every other keyword is data or annotation and is copied as it is.
var (
	// schemaMapKeywords have an object of name → schema as value.
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "dependentSchemas": true,
	}
	// schemaKeywords have one schema as value ("items" may also be an
	// array: the draft-07 tuple form).
	schemaKeywords = map[string]bool{
		"items": true, "additionalItems": true, "additionalProperties": true,
		"not": true, "if": true, "then": true, "else": true, "contains": true,
		"propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"contentSchema": true,
	}
	// schemaListKeywords have an array of schemas as value.
	schemaListKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
	}
	// refKeywords are dropped once references are inlined: the
	// definitions themselves, and what only matters for resolving
	// references ($id, anchors) or for tooling ($schema, $comment).
	refKeywords = map[string]bool{
		"$defs": true, "definitions": true, "$id": true, "$schema": true,
		"$anchor": true, "$dynamicAnchor": true, "$recursiveAnchor": true,
		"$dynamicRef": true, "$recursiveRef": true, "$vocabulary": true,
		"$comment": true,
	}
)

// Limits of inlining.
const (
	// maxRefNesting is how many times one reference may be expanded
	// inside itself on one path from the root. A recursive schema (a tree
	// node whose children are nodes) is expanded this deep, and the next
	// occurrence is cut: replaced by a permissive schema that accepts any
	// value. Arguments the model sends below the cut pass through as they
	// are, and the tool still validates them.
	maxRefNesting = 2
	// maxInlineNodes bounds the schema objects that expanding references
	// may create for one tool. Definitions that each use the next one
	// twice grow exponentially when inlined; past this budget every
	// further reference is cut, as above.
	maxInlineNodes = 4096
)

// inliner replaces every local $ref of one schema document with a copy of
// its target, walked in turn.
type inliner struct {
	root   any
	active map[string]int // reference → expansions open on the current path
	nodes  int            // schema objects created by expanding references
	inRef  int            // > 0 while walking inside an expansion
}

// inlineRefs returns a fresh tree in which no schema has "$ref" and no
// reference machinery ($defs, $id, ...) is left. Subschemas that are not
// objects or booleans (malformed) become permissive {}.
func inlineRefs(root any) any {
	in := &inliner{root: root, active: map[string]int{}}
	return in.walk(root)
}

func (in *inliner) walk(v any) any {
	switch v := v.(type) {
	case bool:
		return v
	case *object:
		return in.walkObject(v)
	default:
		return newObject()
	}
}

func (in *inliner) walkObject(o *object) any {
	if in.inRef > 0 {
		in.nodes++
	}
	if ref, ok := o.vals["$ref"].(string); ok {
		return in.expand(o, ref)
	}
	out := newObject()
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case k == "$ref" || refKeywords[k]:
			// dropped: a non-string $ref is malformed and means nothing
		case schemaMapKeywords[k]:
			m, ok := v.(*object)
			if !ok {
				continue
			}
			mo := newObject()
			for _, name := range m.keys {
				mo.set(name, in.walk(m.vals[name]))
			}
			out.set(k, mo)
		case schemaListKeywords[k] || k == "items" && isArray(v):
			a, ok := v.([]any)
			if !ok {
				continue
			}
			ao := make([]any, len(a))
			for i, e := range a {
				ao[i] = in.walk(e)
			}
			out.set(k, ao)
		case schemaKeywords[k]:
			out.set(k, in.walk(v))
		case k == "dependencies":
			// draft-07: each value is a schema or an array of names
			m, ok := v.(*object)
			if !ok {
				continue
			}
			mo := newObject()
			for _, name := range m.keys {
				if a, ok := m.vals[name].([]any); ok {
					mo.set(name, a)
				} else {
					mo.set(name, in.walk(m.vals[name]))
				}
			}
			out.set(k, mo)
		default:
			out.set(k, v)
		}
	}
	return out
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

// expand returns the schema o, which holds reference ref: its target,
// walked, with o's other keywords laid over it (2020-12 evaluates $ref
// next to its siblings; draft-07 ignored the siblings, but a sibling
// "description" is how servers annotate a shared definition, so it wins).
func (in *inliner) expand(o *object, ref string) any {
	var base any
	target, found := resolvePointer(in.root, ref)
	switch {
	case !found:
		base = cutSchema("a reference that could not be resolved (" + ref + ")")
	case in.active[ref] >= maxRefNesting:
		base = cutSchema("a recursive reference (" + ref + ") not expanded further")
	case in.nodes >= maxInlineNodes:
		base = cutSchema("a reference (" + ref + ") not expanded: the schema is too large when inlined")
	default:
		in.active[ref]++
		in.inRef++
		base = in.walk(target)
		in.inRef--
		in.active[ref]--
	}
	sib := o.clone()
	sib.del("$ref")
	if sib.len() == 0 {
		return base
	}
	sw, _ := in.walkObject(sib).(*object)
	bo, ok := base.(*object)
	if !ok {
		if base == false {
			return false // nothing satisfies false, whatever the siblings say
		}
		bo = newObject() // true
	}
	return merge(bo, sw, true)
}

// cutSchema is the permissive schema that stands in for a reference that
// is not expanded: it accepts any value.
func cutSchema(why string) *object {
	o := newObject()
	o.set("description", "Any JSON value ("+why+").")
	return o
}

// resolvePointer finds the target of a local reference "#" or
// "#/json/pointer" (RFC 6901, percent-decoded as a URI fragment). Anchors
// ("#name") and anything else are not resolved.
func resolvePointer(root any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, false
	}
	if frag == "" {
		return root, true
	}
	if frag[0] != '/' {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.vals[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || tok != strconv.Itoa(i) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// merge combines two object schemas into a new one. Keys keep a's order,
// then b's new keys. "properties" are united (on a name in both, the
// winner's schema), "required" lists are united; for any other key in
// both, b's value wins if bWins, else a's.
func merge(a, b *object, bWins bool) *object {
	out := a.clone()
	for _, k := range b.keys {
		bv := b.vals[k]
		av, inA := out.vals[k]
		switch {
		case !inA:
			out.set(k, bv)
		case k == "properties":
			ap, ok1 := av.(*object)
			bp, ok2 := bv.(*object)
			if !ok1 || !ok2 {
				if bWins {
					out.set(k, bv)
				}
				continue
			}
			u := ap.clone()
			for _, name := range bp.keys {
				if !u.has(name) || bWins {
					u.set(name, bp.vals[name])
				}
			}
			out.set(k, u)
		case k == "required":
			out.set(k, unionStrings(av, bv))
		case bWins:
			out.set(k, bv)
		}
	}
	return out
}

// strings returns the string elements of v, if v is an array.
func stringList(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func unionStrings(a, b any) []any {
	seen := map[string]bool{}
	out := []any{}
	for _, s := range append(stringList(a), stringList(b)...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeAlternatives merges the object schemas of an anyOf or oneOf into
// one that accepts what each accepted: every property of every branch,
// and as required only what all branches require. It is looser than the
// original (a mix of branches passes), never stricter, so any arguments
// valid for one branch fit it; the tool still validates.
func mergeAlternatives(branches []*object) *object {
	out := newObject()
	if len(branches) == 0 {
		return out
	}
	props := newObject()
	var req []string
	for i, b := range branches {
		for _, k := range b.keys {
			switch k {
			case "properties":
				if p, ok := b.vals[k].(*object); ok {
					for _, name := range p.keys {
						if !props.has(name) {
							props.set(name, p.vals[name])
						}
					}
				}
			case "required":
			default:
				if !out.has(k) {
					out.set(k, b.vals[k])
				}
			}
		}
		r := stringList(b.vals["required"])
		if i == 0 {
			req = r
			continue
		}
		in := map[string]bool{}
		for _, s := range r {
			in[s] = true
		}
		kept := req[:0:0]
		for _, s := range req {
			if in[s] {
				kept = append(kept, s)
			}
		}
		req = kept
	}
	out.set("properties", props)
	if len(req) > 0 {
		ra := make([]any, len(req))
		for i, s := range req {
			ra[i] = s
		}
		out.set("required", ra)
	}
	return out
}

// objectBranches returns the object-schema elements of a combinator's
// array value (booleans and junk are skipped).
func objectBranches(v any) []*object {
	a, _ := v.([]any)
	var out []*object
	for _, e := range a {
		if o, ok := e.(*object); ok {
			out = append(out, o)
		}
	}
	return out
}

// types returns the "type" of a schema as a list ("string" or
// ["string","null"]).
func types(o *object) []string {
	switch t := o.vals["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

func hasType(o *object, t string) bool {
	for _, s := range types(o) {
		if s == t {
			return true
		}
	}
	return false
}
