package profile

// jsonSchemaParams converts an input schema for the providers that take
// JSON Schema as it is (OpenAI, Anthropic), changing only what they
// reject or what OpenAI-compatible servers commonly fail on:
//
//   - every "$ref" is inlined and "$defs"/"definitions" dropped (see
//     inlineRefs; recursion is cut at maxRefNesting);
//   - "allOf", "anyOf" and "oneOf" at the top level are merged into the
//     top-level object (Anthropic rejects them there: "input_schema does
//     not support oneOf, allOf, or anyOf at the top level");
//   - the top level is {"type":"object","properties":{...}};
//   - a schema whose type includes "object" gets "properties": {} when it
//     has none, and one whose type includes "array" gets "items": {}
//     (OpenAI: "array schema missing items").
//
// Nested combinators and every other keyword are kept: both providers
// accept them when strict mode is off. None of this changes the shape of
// the arguments a model sends, so they pass through unchanged.
func jsonSchemaParams(root any) *object {
	r := topObject(inlineRefs(root))
	fixJSONSchema(r)
	return r
}

// topObject turns the (inlined) root into an object schema of type
// "object" with "properties", merging top-level combinators into it.
func topObject(v any) *object {
	r, ok := v.(*object)
	if !ok {
		r = newObject() // true, false or junk: no declared parameters
	}
	if all, ok := r.vals["allOf"]; ok {
		r.del("allOf")
		for _, b := range objectBranches(all) {
			b = topObject(b) // a branch may hold combinators of its own
			r = merge(r, b, false)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := r.vals[k]
		if !ok {
			continue
		}
		r.del(k)
		var bs []*object
		for _, b := range objectBranches(alts) {
			bs = append(bs, topObject(b))
		}
		if len(bs) > 0 {
			r = merge(r, mergeAlternatives(bs), false)
		}
	}
	p, ok := r.vals["properties"].(*object)
	if !ok {
		p = newObject()
	}
	r.del("properties")
	r.setFirst("type", "object")
	insertAfter(r, "type", "properties", p)
	return r
}

// fixJSONSchema adds the "properties" and "items" that objects and arrays
// lack, everywhere in the tree, in place.
func fixJSONSchema(o *object) {
	if hasType(o, "object") {
		if _, ok := o.vals["properties"].(*object); !ok {
			insertAfter(o, "type", "properties", newObject())
		}
	}
	if hasType(o, "array") {
		switch o.vals["items"].(type) {
		case *object, bool, []any:
		default:
			insertAfter(o, "type", "items", newObject())
		}
	}
	eachSubschema(o, func(s *object) { fixJSONSchema(s) })
}

// insertAfter sets k to v right after key after (or last if after is
// absent), replacing any value k had.
func insertAfter(o *object, after, k string, v any) {
	o.del(k)
	for i, kk := range o.keys {
		if kk == after {
			o.keys = append(o.keys[:i+1], append([]string{k}, o.keys[i+1:]...)...)
			o.vals[k] = v
			return
		}
	}
	o.set(k, v)
}

// eachSubschema calls fn on each object subschema directly below o.
func eachSubschema(o *object, fn func(*object)) {
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case schemaMapKeywords[k] || k == "dependencies":
			if m, ok := v.(*object); ok {
				for _, name := range m.keys {
					if s, ok := m.vals[name].(*object); ok {
						fn(s)
					}
				}
			}
		case schemaListKeywords[k] || schemaKeywords[k]:
			switch v := v.(type) {
			case *object:
				fn(v)
			case []any:
				for _, e := range v {
					if s, ok := e.(*object); ok {
						fn(s)
					}
				}
			}
		}
	}
}
