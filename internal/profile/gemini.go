package profile

import (
	"encoding/json"
	"strings"
)

// geminiKeywords are the only keys a converted Gemini schema has: the
// subset of the Schema object of the Gemini API and Vertex AI that both
// document and that has no caveat (see doc.go). Left out on purpose:
// "anyOf" (absent from older versions; flattened instead), "title"
// (folded into the description), "default" and "example" (ignored or
// rejected depending on the version), "pattern" (a server's regular
// expression may not compile in Google's engine), "propertyOrdering" and
// "min/maxProperties" (of no use for arguments).
var geminiKeywords = map[string]bool{
	"type": true, "format": true, "description": true, "nullable": true,
	"enum": true, "items": true, "properties": true, "required": true,
	"minItems": true, "maxItems": true, "minLength": true, "maxLength": true,
	"minimum": true, "maximum": true,
}

// geminiFormats are the formats the Gemini API accepts, per type; the
// Firebase AI reference warns that any other string format fails with
// the Gemini Developer API.
var geminiFormats = map[string]map[string]bool{
	"STRING":  {"enum": true, "date-time": true},
	"NUMBER":  {"float": true, "double": true},
	"INTEGER": {"int32": true, "int64": true},
}

// wrapName is the single parameter that stands for the whole arguments
// object of a tool whose input is a free-form map with no declared
// properties (Gemini rejects an OBJECT with empty properties).
const wrapName = "arguments"

// argMap says how to turn the arguments a model sent for a converted
// schema back into arguments for the original one. A nil *argMap means
// unchanged.
type argMap struct {
	decode bool               // the value is JSON text in a string: decode it
	props  map[string]propArg // provider-side property name → original
	items  *argMap            // every array element
	unwrap string             // the arguments are the JSON text in this property
}

type propArg struct {
	orig string
	sub  *argMap
}

// apply maps v, a value decoded from the model's arguments, back.
// Anything that does not have the expected shape is passed through as it
// is: the tool validates its own arguments and reports the error.
func (m *argMap) apply(v any) any {
	if m == nil {
		return v
	}
	if m.unwrap != "" {
		o, ok := v.(*object)
		if !ok {
			return v
		}
		inner, ok := o.vals[m.unwrap]
		if !ok {
			return newObject()
		}
		return (&argMap{decode: true}).apply(inner)
	}
	if m.decode {
		s, ok := v.(string)
		if !ok {
			return v
		}
		d, err := decode([]byte(s))
		if err != nil {
			return v
		}
		return d
	}
	switch v := v.(type) {
	case *object:
		if m.props == nil {
			return v
		}
		out := newObject()
		for _, k := range v.keys {
			p, ok := m.props[k]
			if !ok {
				if !out.has(k) {
					out.set(k, v.vals[k])
				}
				continue
			}
			out.set(p.orig, p.sub.apply(v.vals[k]))
		}
		return out
	case []any:
		if m.items == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = m.items.apply(e)
		}
		return out
	}
	return v
}

// geminiParams converts an input schema to Gemini's parameters, or nil
// when the tool takes no parameters (Gemini rejects an OBJECT schema with
// empty properties; parameters may be left unset).
func geminiParams(root any) (*object, *argMap) {
	r, ok := inlineRefs(root).(*object)
	if !ok {
		return nil, nil
	}
	r = flattenCombinators(r)
	r.setFirst("type", "object")
	p, pm := convertGemini(r)
	if p.vals["type"] == "OBJECT" {
		return p, pm
	}
	// No declared properties. If the tool takes a free-form map, pass it
	// as one JSON string parameter; otherwise it takes nothing.
	ap, hasAP := r.vals["additionalProperties"]
	_, hasPP := r.vals["patternProperties"]
	if (!hasAP || ap == false) && !hasPP {
		return nil, nil
	}
	arg := newObject()
	arg.set("type", "STRING")
	arg.set("description", "The arguments, as a JSON object encoded as a string.")
	props := newObject()
	props.set(wrapName, arg)
	w := newObject()
	w.set("type", "OBJECT")
	w.set("properties", props)
	w.set("required", []any{wrapName})
	return w, &argMap{unwrap: wrapName}
}

// convertGemini converts one inlined JSON Schema to Gemini's subset.
func convertGemini(v any) (*object, *argMap) {
	o, ok := v.(*object)
	if !ok {
		return anyValue("", false, false)
	}
	o = flattenCombinators(o)
	desc := o.str("description")
	if desc == "" {
		desc = o.str("title")
	}
	nullable := o.vals["nullable"] == true
	kind := ""
	for _, t := range types(o) {
		if t == "null" {
			nullable = true
		} else if kind == "" {
			kind = t
		}
	}
	if kind == "" {
		kind = inferKind(o)
	}

	switch kind {
	case "object":
		return geminiObject(o, desc, nullable)
	case "array":
		out := newObject()
		out.set("type", "ARRAY")
		setDesc(out, desc)
		setNullable(out, nullable)
		var is any
		switch it := o.vals["items"].(type) {
		case *object:
			is = it
		case []any: // draft-07 tuple: one schema for every position
			is = anyOfObject(it)
		default:
			if pi, ok := o.vals["prefixItems"].([]any); ok {
				is = anyOfObject(pi)
			}
		}
		items, im := convertGemini(is)
		out.set("items", items)
		copyCount(out, o, "minItems")
		copyCount(out, o, "maxItems")
		var m *argMap
		if im != nil {
			m = &argMap{items: im}
		}
		return out, m
	case "string", "number", "integer", "boolean":
		return geminiScalar(o, strings.ToUpper(kind), desc, nullable), nil
	}
	return anyValue(desc, nullable, false)
}

func geminiObject(o *object, desc string, nullable bool) (*object, *argMap) {
	props, _ := o.vals["properties"].(*object)
	var names []string
	if props != nil {
		for _, k := range props.keys {
			if props.vals[k] != false { // a property that must be absent
				names = append(names, k)
			}
		}
	}
	if len(names) == 0 {
		return anyValue(desc, nullable, true)
	}
	newNames := assignNames(names, ruleGeminiParam, false)
	outProps := newObject()
	m := &argMap{props: map[string]propArg{}}
	for _, k := range names {
		child, cm := convertGemini(props.vals[k])
		nk := newNames[k]
		outProps.set(nk, child)
		if nk != k || cm != nil {
			m.props[nk] = propArg{orig: k, sub: cm}
		}
	}
	out := newObject()
	out.set("type", "OBJECT")
	setDesc(out, desc)
	setNullable(out, nullable)
	out.set("properties", outProps)
	var req []any
	seen := map[string]bool{}
	for _, r := range stringList(o.vals["required"]) {
		if nk, ok := newNames[r]; ok && !seen[nk] {
			seen[nk] = true
			req = append(req, nk)
		}
	}
	if len(req) > 0 {
		out.set("required", req)
	}
	if len(m.props) == 0 {
		m = nil
	}
	return out, m
}

func geminiScalar(o *object, typ, desc string, nullable bool) *object {
	out := newObject()
	out.set("type", typ)
	var notes []string
	if f := o.str("format"); f != "" {
		if geminiFormats[typ][f] {
			out.set("format", f)
		} else if typ == "STRING" {
			notes = append(notes, "Format: "+f+".")
		}
	}
	vals, hasEnum := o.vals["enum"].([]any)
	if c, ok := o.vals["const"]; ok {
		vals, hasEnum = []any{c}, true
	}
	var enum []any
	if hasEnum {
		// null is not a value of the type: it made the schema nullable
		nonNull := make([]any, 0, len(vals))
		for _, e := range vals {
			if e != nil {
				nonNull = append(nonNull, e)
			}
		}
		vals = nonNull
	}
	if hasEnum && len(vals) > 0 {
		allStrings := typ == "STRING"
		for _, e := range vals {
			if _, ok := e.(string); !ok {
				allStrings = false
			}
		}
		if allStrings {
			enum = vals
		} else {
			parts := make([]string, len(vals))
			for i, e := range vals {
				parts[i] = string(encode(e))
			}
			notes = append(notes, "Allowed values: "+strings.Join(parts, ", ")+".")
		}
	}
	if len(notes) > 0 {
		if desc != "" && !strings.HasSuffix(desc, ".") {
			desc += "."
		}
		desc = strings.TrimSpace(desc + " " + strings.Join(notes, " "))
	}
	setDesc(out, desc)
	setNullable(out, nullable)
	if enum != nil {
		out.set("enum", enum)
	}
	switch typ {
	case "STRING":
		copyCount(out, o, "minLength")
		copyCount(out, o, "maxLength")
	case "NUMBER", "INTEGER":
		for _, k := range []string{"minimum", "maximum"} {
			if n, ok := o.vals[k].(json.Number); ok {
				if _, err := n.Float64(); err == nil {
					out.set(k, n)
				}
			}
		}
	}
	return out
}

// anyValue is Gemini's stand-in for a schema it cannot express (any
// value, a free-form object, a cut recursion): a string holding JSON,
// which Resolve decodes.
func anyValue(desc string, nullable, isObject bool) (*object, *argMap) {
	what := "A JSON value, encoded as a string."
	if isObject {
		what = "A JSON object, encoded as a string."
	}
	if desc != "" {
		if !strings.HasSuffix(desc, ".") {
			desc += "."
		}
		desc += " " + what
	} else {
		desc = what
	}
	out := newObject()
	out.set("type", "STRING")
	out.set("description", desc)
	setNullable(out, nullable)
	return out, &argMap{decode: true}
}

func setDesc(o *object, d string) {
	if d != "" {
		o.set("description", d)
	}
}

func setNullable(o *object, n bool) {
	if n {
		o.set("nullable", true)
	}
}

// copyCount copies a non-negative integer keyword.
func copyCount(dst, src *object, k string) {
	n, ok := src.vals[k].(json.Number)
	if !ok {
		return
	}
	if i, err := n.Int64(); err == nil && i >= 0 {
		dst.set(k, n)
	}
}

func anyOfObject(branches []any) *object {
	o := newObject()
	o.set("anyOf", branches)
	return o
}

// inferKind guesses the type of a schema without "type" from its other
// keywords, or returns "" (any value).
func inferKind(o *object) string {
	switch {
	case o.has("properties") || o.has("required") || o.has("additionalProperties"):
		return "object"
	case o.has("items") || o.has("prefixItems"):
		return "array"
	}
	vals, ok := o.vals["enum"].([]any)
	if c, has := o.vals["const"]; has {
		vals, ok = []any{c}, true
	}
	if ok && len(vals) > 0 {
		kind := ""
		for _, e := range vals {
			k := ""
			switch e := e.(type) {
			case string:
				k = "string"
			case bool:
				k = "boolean"
			case json.Number:
				k = "number"
				if !strings.ContainsAny(string(e), ".eE") {
					k = "integer"
				}
			default:
				return ""
			}
			if kind != "" && kind != k {
				return ""
			}
			kind = k
		}
		return kind
	}
	return ""
}

func isNullSchema(o *object) bool {
	ts := types(o)
	if len(ts) == 1 && ts[0] == "null" {
		return true
	}
	if e, ok := o.vals["enum"].([]any); ok && len(e) == 1 && e[0] == nil {
		return true
	}
	c, ok := o.vals["const"]
	return ok && c == nil
}

// flattenCombinators removes allOf, anyOf and oneOf from o, which Gemini
// cannot take (older versions have no anyOf; none has allOf or oneOf):
//
//   - allOf: the branches are merged into o.
//   - anyOf/oneOf: a null branch makes o nullable; the other branches
//     are merged with mergeAlternatives when all are objects, merged
//     (enums united) when all have the same scalar type, and otherwise
//     dropped, leaving a value of any type (JSON in a string, see
//     anyValue). o's own keywords win over the branch's.
//
// The result accepts arguments valid for one of the branches, or is
// looser; the tool validates what it receives.
func flattenCombinators(o *object) *object {
	if all, ok := o.vals["allOf"]; ok {
		base := o.clone()
		base.del("allOf")
		for _, b := range objectBranches(all) {
			base = merge(base, flattenCombinators(b), false)
		}
		o = base
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := o.vals[k]
		if !ok {
			continue
		}
		base := o.clone()
		base.del(k)
		arr, _ := alts.([]any)
		nullable, anyBranch := false, false
		var nn []*object
		for _, e := range arr {
			b, ok := e.(*object)
			if !ok {
				if e == true {
					anyBranch = true
				}
				continue
			}
			b = flattenCombinators(b)
			if isNullSchema(b) {
				nullable = true
			} else {
				nn = append(nn, b)
			}
		}
		var chosen *object
		switch {
		case anyBranch || len(nn) == 0:
			chosen = newObject()
		case sameKind(nn, "object"):
			chosen = mergeAlternatives(nn)
			chosen.setFirst("type", "object")
		case sameKind(nn, ""):
			chosen = nn[0].clone()
			chosen.setFirst("type", kindOf(nn[0]))
			var enum []any
			seen := map[string]bool{}
			for _, b := range nn {
				e, ok := b.vals["enum"].([]any)
				if c, has := b.vals["const"]; has {
					e, ok = []any{c}, true
				}
				if !ok {
					enum = nil
					break
				}
				for _, x := range e {
					if key := string(encode(x)); !seen[key] {
						seen[key] = true
						enum = append(enum, x)
					}
				}
			}
			chosen.del("const")
			chosen.del("enum")
			if enum != nil {
				chosen.set("enum", enum)
			}
		default:
			// Branches of different kinds: Gemini has no union, and
			// taking one branch would make the others impossible to
			// send. The value becomes JSON in a string, which Resolve
			// decodes, so every branch stays possible.
			chosen = newObject()
		}
		o = merge(chosen, base, true)
		if nullable {
			o.set("nullable", true)
		}
	}
	return o
}

// kindOf is the first non-null type of o, or its inferred kind.
func kindOf(o *object) string {
	for _, t := range types(o) {
		if t != "null" {
			return t
		}
	}
	return inferKind(o)
}

// sameKind reports whether every branch has kind want, or, with want "",
// the same scalar kind.
func sameKind(bs []*object, want string) bool {
	first := kindOf(bs[0])
	if want != "" && first != want {
		return false
	}
	if want == "" && (first == "" || first == "object" || first == "array") {
		return false
	}
	for _, b := range bs[1:] {
		if kindOf(b) != first {
			return false
		}
	}
	return true
}
