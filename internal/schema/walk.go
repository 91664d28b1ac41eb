package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// keyword says what the value of a schema keyword is. Only what the walk
// must look inside is listed; every other keyword, known or not, is data
// or annotation and is never searched for references.
type keyword uint8

const (
	// kwOther: not a schema. Includes "enum", "const", "default" and
	// "examples", whose values are instances (a {"$ref": ...} there is
	// just data), and unknown keywords, which JSON Schema 2020-12 treats as
	// annotations (Core §6.5) and no validator resolves references in.
	kwOther keyword = iota
	// kwRef: a reference, which must be a local fragment.
	kwRef
	// kwSchemas: a schema, or an array of schemas ("allOf" and friends,
	// and the draft-07 tuple form of "items").
	kwSchemas
	// kwSchemaMap: an object whose keys are names (of properties,
	// definitions, patterns) and whose values are schemas.
	kwSchemaMap
)

// keywords covers draft-07, 2019-09 and 2020-12, since servers emit all
// three. A value of the wrong shape is still searched, as schemas, when it
// can hold one: a validator that is lax about shape must not find a remote
// reference that this walk skipped.
var keywords = map[string]keyword{
	"$ref":          kwRef,
	"$dynamicRef":   kwRef, // 2020-12
	"$recursiveRef": kwRef, // 2019-09

	"properties":        kwSchemaMap,
	"patternProperties": kwSchemaMap,
	"$defs":             kwSchemaMap,
	"definitions":       kwSchemaMap, // draft-07
	"dependentSchemas":  kwSchemaMap,
	"dependencies":      kwSchemaMap, // draft-07: a value is a schema or an array of names

	"items":                 kwSchemas,
	"additionalItems":       kwSchemas, // draft-07, 2019-09
	"additionalProperties":  kwSchemas,
	"not":                   kwSchemas,
	"if":                    kwSchemas,
	"then":                  kwSchemas,
	"else":                  kwSchemas,
	"contains":              kwSchemas,
	"propertyNames":         kwSchemas,
	"unevaluatedItems":      kwSchemas,
	"unevaluatedProperties": kwSchemas,
	"contentSchema":         kwSchemas,
	"allOf":                 kwSchemas,
	"anyOf":                 kwSchemas,
	"oneOf":                 kwSchemas,
	"prefixItems":           kwSchemas,
}

// walkError is a rejection found by the walk, with the JSON Pointer of
// where it was found, built up as the walk unwinds.
type walkError struct {
	reason, detail string
	path           []string // reference tokens, innermost first
}

// at records that the error was found under token.
func (e *walkError) at(token string) *walkError {
	e.path = append(e.path, token)
	return e
}

// pointer renders the path as a JSON Pointer (RFC 6901); "" is the root.
func (e *walkError) pointer() string {
	var b strings.Builder
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(r.Replace(e.path[i]))
	}
	return b.String()
}

// walkObject checks the object at d[i] and returns the index just past
// it. As a schema (names false) it checks, through the keywords that hold
// schemas, every schema inside it; as a name-to-schema map (names true:
// the value of "properties", "$defs" and the like) it checks every value
// as schemas, and its keys are just names, so a property called "$ref" is
// just a property. Either way: no duplicate keys, and every reference
// local. "$id" is deliberately not tracked: the package comment says why
// it cannot make a fragment remote.
//
// The walk is one pass over the bytes: each value is either walked into
// or skipped, never both. The verdict is that of checking the object's
// keys for duplicates first and then its members in order: a duplicate
// anywhere in the object wins over an error inside a member, and
// otherwise the first member's error wins. It recurses, which is safe
// only because scan has bounded the depth. keep, when not nil, receives
// the members.
func walkObject(d []byte, i int, names bool, keep *[]member) (int, *walkError) {
	var (
		dup, first *walkError
		seen       [16][]byte // the first keys, for the duplicate check
		more       map[string]struct{}
		n          int
	)
	end, err := jsonscan.Object(d, i, func(m jsonscan.Member) (int, error) {
		if dup == nil {
			dup = duplicate(m.Key, &seen, &more, n)
			n++
		}
		kind := kwSchemas
		if !names {
			kind = keywords[string(m.Key)]
		}
		if first != nil || dup != nil {
			kind = kwOther // the verdict is known: only the end matters now
		}
		var end int
		var werr *walkError
		switch kind {
		case kwSchemas:
			end, werr = walkSchemas(d, m.Value)
		case kwSchemaMap:
			if d[m.Value] == '{' {
				end, werr = walkObject(d, m.Value, true, nil)
			} else {
				end, werr = walkSchemas(d, m.Value)
			}
		default:
			end = skip(d, m.Value)
			if kind == kwRef {
				werr = checkRef(string(m.Key), d[m.Value:end])
			}
		}
		if werr != nil {
			first = werr.at(string(m.Key))
		}
		if keep != nil {
			*keep = append(*keep, member{key: m.Key, raw: d[m.KeyStart:end], val: d[m.Value:end]})
		}
		return end, nil
	})
	mustScan(err)
	if dup != nil {
		return end, dup
	}
	return end, first
}

// walkSchemas checks the value at d[i] as a schema if it is an object, as
// schemas if it is an array (at any nesting); true, false and the rest
// hold no reference. It returns the index just past the value.
func walkSchemas(d []byte, i int) (int, *walkError) {
	switch d[i] {
	case '{':
		return walkObject(d, i, false, nil)
	case '[':
		var first *walkError
		end, err := jsonscan.Array(d, i, func(n, start int) (int, error) {
			if first != nil {
				return skip(d, start), nil
			}
			end, werr := walkSchemas(d, start)
			if werr != nil {
				first = werr.at(strconv.Itoa(n))
			}
			return end, nil
		})
		mustScan(err)
		return end, first
	}
	return skip(d, i), nil
}

// checkRef requires the value of a reference keyword to be a string that
// starts with "#", after decoding (so "\u0023..." is local too). Anything
// else — a URL, a relative path, "", a non-string — might be resolved
// against a base URI and fetched by a validator.
func checkRef(key string, v []byte) *walkError {
	if v[0] != '"' {
		return &walkError{reason: ReasonRemoteRef,
			detail: fmt.Sprintf("%s is %s, not a local fragment", key, kindOf(v))}
	}
	s := decodeString(v)
	if !strings.HasPrefix(s, "#") {
		return &walkError{reason: ReasonRemoteRef,
			detail: fmt.Sprintf("%s %q is not a local fragment", key, clip(s))}
	}
	return nil
}

// duplicate reports whether key, the nth key of an object, repeats one of
// the keys before it, which are in seen (the first 16) and, beyond 16, in
// more. Parsers disagree on which duplicate wins (Go's last, others the
// first), so a schema with a duplicate could mean one thing to this check
// and another to the next consumer: {"$ref":"#","$ref":"https://..."}.
func duplicate(key []byte, seen *[16][]byte, more *map[string]struct{}, n int) *walkError {
	// Most schema objects have a handful of keys, for which comparing
	// pairs is cheaper than building a map.
	found := false
	for _, k := range seen[:min(n, len(seen))] {
		if string(k) == string(key) {
			found = true
			break
		}
	}
	if !found && n >= len(seen) {
		if *more == nil {
			*more = make(map[string]struct{})
		}
		_, found = (*more)[string(key)]
	}
	switch {
	case found:
		return &walkError{reason: ReasonInvalidJSON, detail: fmt.Sprintf("duplicate key %q", clip(string(key)))}
	case n < len(seen):
		seen[n] = key
	default:
		(*more)[string(key)] = struct{}{}
	}
	return nil
}

// The parsing below works on JSON already known to be valid and of
// bounded depth (jsonscan validates it again as it goes, which costs little
// and means a scanning error here is a bug, reported by a panic rather
// than let a key or a reference be misread). It tolerates whitespace,
// though it is handed compact JSON.

// member is one member of an object.
type member struct {
	key []byte // decoded
	raw []byte // the whole member, `"key":value`, as in the document
	val []byte // the value
}

// skip returns the index just past the value at d[i].
func skip(d []byte, i int) int {
	end, _, err := jsonscan.Skip(d, i, 1)
	mustScan(err)
	return end
}

// decodeString decodes the JSON string literal s (quotes included).
func decodeString(s []byte) string {
	end, info, err := jsonscan.ScanString(s, 0)
	mustScan(err)
	body := s[1 : end-1]
	if info.Plain() {
		return string(body)
	}
	return string(jsonscan.AppendUnquote(make([]byte, 0, info.Len), body, math.MaxInt))
}

// mustScan panics on an error from scanning a validated document:
// unreachable, unless jsonscan and encoding/json disagree.
func mustScan(err error) {
	if err != nil {
		panic("schema: scanning a validated document: " + err.Error())
	}
}
