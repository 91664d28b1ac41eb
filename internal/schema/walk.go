package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// walkSchema checks the schema object obj and, through the keywords that
// hold schemas, every schema inside it: no duplicate keys, and every
// reference local. It recurses; scan has bounded the depth. "$id" is
// deliberately not tracked: the package comment says why it cannot make a
// fragment remote.
func walkSchema(obj []byte) *walkError {
	return walkMembers(members(obj))
}

// walkMembers is walkSchema on a schema object already split into members.
func walkMembers(ms []member) *walkError {
	if err := duplicate(ms); err != nil {
		return err
	}
	for _, m := range ms {
		var err *walkError
		switch keywords[m.key] {
		case kwRef:
			err = checkRef(m.key, m.val)
		case kwSchemas:
			err = walkSchemas(m.val)
		case kwSchemaMap:
			if m.val[0] == '{' {
				err = walkSchemaMap(m.val)
			} else {
				err = walkSchemas(m.val)
			}
		}
		if err != nil {
			return err.at(m.key)
		}
	}
	return nil
}

// walkSchemas checks v as a schema if it is an object, as schemas if it is
// an array (at any nesting); true, false and the rest hold no reference.
func walkSchemas(v []byte) *walkError {
	switch v[0] {
	case '{':
		return walkSchema(v)
	case '[':
		for i, e := range elements(v) {
			if err := walkSchemas(e); err != nil {
				return err.at(strconv.Itoa(i))
			}
		}
	}
	return nil
}

// walkSchemaMap checks the values of a name-to-schema object. Its keys are
// names, so a property called "$ref" is just a property.
func walkSchemaMap(obj []byte) *walkError {
	ms := members(obj)
	if err := duplicate(ms); err != nil {
		return err
	}
	for _, m := range ms {
		if err := walkSchemas(m.val); err != nil {
			return err.at(m.key)
		}
	}
	return nil
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

// duplicate rejects an object that names a key twice. Parsers disagree on
// which one wins (Go's last, others the first), so a schema with a
// duplicate could mean one thing to this check and another to the next
// consumer: {"$ref":"#","$ref":"https://..."}.
func duplicate(ms []member) *walkError {
	dup := func(key string) *walkError {
		return &walkError{reason: ReasonInvalidJSON, detail: fmt.Sprintf("duplicate key %q", clip(key))}
	}
	// Most schema objects have a handful of keys, for which comparing
	// pairs is cheaper than building a map.
	if len(ms) <= 16 {
		for i := range ms {
			for j := range i {
				if ms[i].key == ms[j].key {
					return dup(ms[i].key)
				}
			}
		}
		return nil
	}
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, ok := seen[m.key]; ok {
			return dup(m.key)
		}
		seen[m.key] = struct{}{}
	}
	return nil
}

// The parsing below works on JSON already known to be valid and of
// bounded depth, so it only has to find boundaries, never to report
// errors. It tolerates whitespace, though it is handed compact JSON.

// member is one member of an object.
type member struct {
	key string // decoded
	raw []byte // the whole member, `"key":value`, as in the document
	val []byte // the value
}

// members returns the members of the object obj, in document order.
func members(obj []byte) []member {
	ms := make([]member, 0, 8)
	i := skipSpace(obj, 1)
	for obj[i] != '}' {
		start := i
		keyEnd := stringEnd(obj, i)
		i = skipSpace(obj, skipSpace(obj, keyEnd)+1) // past ':'
		valEnd := valueEnd(obj, i)
		ms = append(ms, member{
			key: decodeString(obj[start:keyEnd]),
			raw: obj[start:valEnd],
			val: obj[i:valEnd],
		})
		i = skipSpace(obj, valEnd)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return ms
}

// elements returns the elements of the array arr.
func elements(arr []byte) [][]byte {
	var es [][]byte
	i := skipSpace(arr, 1)
	for arr[i] != ']' {
		end := valueEnd(arr, i)
		es = append(es, arr[i:end])
		i = skipSpace(arr, end)
		if arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return es
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at b[i].
// Strings are most of a schema's bytes (descriptions), so it jumps from
// quote to quote; a quote is escaped when an odd number of backslashes
// precede it.
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		i += bytes.IndexByte(b[i:], '"')
		n := 0
		for b[i-1-n] == '\\' { // stops at the opening quote at the latest
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
}

// valueEnd returns the index just past the value that starts at b[i]. It
// skips a container by counting brackets rather than by recursion.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default: // number, true, false, null
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

// decodeString decodes the JSON string literal s (quotes included).
func decodeString(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	var out string
	if err := json.Unmarshal(s, &out); err != nil {
		// Unreachable: s was validated. Panic loudly rather than let a
		// key or reference be misread.
		panic("schema: decoding a validated string: " + err.Error())
	}
	return out
}
