package drift

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// fieldOrder is the order in which Diff shows a tool's fields; any other
// key follows, sorted.
var fieldOrder = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// textFields hold strings that Diff shows as text, one line per line.
var textFields = map[string]bool{"name": true, "title": true, "description": true}

// Diff renders a Change for a terminal. It starts with one line that says
// whether the tool (or the server's instructions, for Tool "") is new,
// removed or changed. Then, for each field that differs (name, title,
// description, inputSchema, outputSchema, annotations, in that order), a
// line with the field's name and a line diff: removed lines prefixed "- ",
// added ones "+ ", and up to three unchanged lines around them prefixed
// "  " (an empty line shows as its prefix without the space); when
// unchanged lines are left out, each group of changes starts with a
// unified-diff header "@@ -12,7 +12,8 @@".
//
// Text (name, title, description, instructions) is shown as its lines.
// Schemas are pretty-printed, one property a line, and a line that differs
// only in its trailing comma counts as unchanged, so that adding a
// property shows as one added line. Annotations are shown one hint a line
// with its effective value, "(default)" marking a hint the server left
// unset (or, for readOnlyHint and idempotentHint, set to false: see
// [Definition]); an absent annotations object shows as all defaults.
//
// Every line is escaped for a terminal: control characters (ESC, CR, tab,
// DEL, C1), format characters (zero-width, bidi, tag characters), variation
// selectors, non-ASCII spaces and invalid UTF-8 are shown as \xHH, \uHHHH
// or \UHHHHHHHH escapes, and in text a backslash is shown as \\, so no
// escape can be forged. Nothing is left out.
//
// The line diff is Myers'. Either side longer than 2000 lines, or a diff
// of more than 1000 added and removed lines, is shown whole instead. The
// output is deterministic and ends with a newline.
func Diff(c Change) string {
	var w strings.Builder
	what := "tool " + escapeText(c.Tool)
	order := fieldOrder
	switch c.Tool {
	case "":
		what = "server instructions"
	case LaunchKey:
		what, order = "server launch", launchOrder
	}
	switch {
	case c.Old == nil && c.New == nil:
		fmt.Fprintf(&w, "%s: absent before and now\n", what)
		return w.String()
	case c.Old == nil:
		fmt.Fprintf(&w, "%s: new, not approved before\n", what)
	case c.New == nil:
		fmt.Fprintf(&w, "%s: removed\n", what)
	default:
		fmt.Fprintf(&w, "%s: changed since it was approved\n", what)
	}
	if c.Tool == "" {
		diffInstructions(&w, c)
	} else {
		diffTool(&w, c, order)
	}
	return w.String()
}

// diffInstructions writes the line diff of two instructions definitions.
func diffInstructions(w *strings.Builder, c Change) {
	lines := func(def []byte) ([]string, bool) {
		if def == nil {
			return nil, true
		}
		v, err := parse(def)
		s, ok := v.(string)
		if err != nil || !ok {
			return rawLines(def), false
		}
		return textLines(s), true
	}
	old, okOld := lines(c.Old)
	cur, okNew := lines(c.New)
	if !okOld || !okNew {
		w.WriteString("not a JSON string (shown as stored):\n")
	}
	writeLineDiff(w, old, cur, exact)
}

// diffTool writes the line diffs of the fields of two tool (or launch)
// definitions, the fields in order first.
func diffTool(w *strings.Builder, c Change, order []string) {
	old, okOld := parseTool(c.Old)
	cur, okNew := parseTool(c.New)
	if !okOld || !okNew {
		// Not written by Definition (a damaged store?): show it as it is.
		w.WriteString("definition (not a JSON object, shown as stored):\n")
		writeLineDiff(w, rawLines(c.Old), rawLines(c.New), exact)
		return
	}
	keys := append([]string(nil), order...)
	for _, o := range []object{old, cur} {
		for _, m := range o { // sorted
			if !slices.Contains(keys, m.key) {
				keys = append(keys, m.key)
			}
		}
	}
	written := false
	for _, key := range keys {
		ov, inOld := old.get(key)
		nv, inNew := cur.get(key)
		if !inOld && !inNew || inOld && inNew && bytes.Equal(compact(ov), compact(nv)) {
			continue
		}
		ol, equal := fieldLines(key, ov, inOld, c.Old != nil)
		nl, _ := fieldLines(key, nv, inNew, c.New != nil)
		fmt.Fprintf(w, "%s:\n", escapeText(key))
		writeLineDiff(w, ol, nl, equal)
		written = true
	}
	if !written && c.Old != nil && c.New != nil {
		w.WriteString("no field differs: the two differ only in their encoding\n")
	}
}

// parseTool parses a tool definition; nil parses as an empty object.
func parseTool(def []byte) (object, bool) {
	if def == nil {
		return nil, true
	}
	v, err := parse(def)
	o, ok := v.(object)
	return o, err == nil && ok
}

// fieldLines returns the lines that show field key with value v (has
// reports whether the definition has the field, exists whether there is a
// definition at all), and how to tell if two such lines are the same.
func fieldLines(key string, v any, has, exists bool) ([]string, func(x, y string) bool) {
	if key == "annotations" {
		if lines, ok := annotationLines(v, has); ok {
			if !exists {
				lines = nil
			}
			return lines, exact
		}
	}
	if !has || !exists {
		return nil, sameJSONLine
	}
	if s, ok := v.(string); ok && textFields[key] {
		return textLines(s), exact
	}
	return jsonLines(v), sameJSONLine
}

type hintDefault struct {
	key string
	def bool
}

// hintDefaults are the annotation hints with the value the specification
// gives them when unset.
var hintDefaults = []hintDefault{
	{"destructiveHint", true},
	{"idempotentHint", false},
	{"openWorldHint", true},
	{"readOnlyHint", false},
}

// annotationLines shows annotations one hint a line with its effective
// value, or reports false if v is not annotations as Definition writes
// them.
func annotationLines(v any, has bool) ([]string, bool) {
	var o object
	if has {
		var ok bool
		if o, ok = v.(object); !ok {
			return nil, false
		}
	}
	for _, m := range o {
		var ok bool
		if m.key == "title" {
			_, ok = m.val.(string)
		} else {
			_, ok = m.val.(bool)
			ok = ok && slices.ContainsFunc(hintDefaults, func(h hintDefault) bool { return h.key == m.key })
		}
		if !ok {
			return nil, false
		}
	}
	var lines []string
	for _, h := range hintDefaults {
		if v, ok := o.get(h.key); ok {
			lines = append(lines, fmt.Sprintf("%s: %t", h.key, v))
		} else {
			lines = append(lines, fmt.Sprintf("%s: %t (default)", h.key, h.def))
		}
	}
	if t, ok := o.get("title"); ok {
		lines = append(lines, "title: "+escapeJSON(pretty(t)))
	}
	return lines, true
}

// textLines splits s into escaped lines.
func textLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escapeText(l)
	}
	return lines
}

// jsonLines pretty-prints v into escaped lines.
func jsonLines(v any) []string {
	lines := strings.Split(pretty(v), "\n")
	for i, l := range lines {
		lines[i] = escapeJSON(l)
	}
	return lines
}

// rawLines splits bytes of unknown form into escaped lines.
func rawLines(b []byte) []string {
	if b == nil {
		return nil
	}
	return textLines(string(b))
}

func exact(x, y string) bool { return x == y }

// sameJSONLine compares pretty-printed JSON lines ignoring a trailing
// comma, which only says whether a member follows.
func sameJSONLine(x, y string) bool {
	return strings.TrimSuffix(x, ",") == strings.TrimSuffix(y, ",")
}
