package clientconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// tomlEditor edits Codex's config.toml as lines: a server is the table
// [mcp_servers.NAME] and its sub-tables, each running from its header to
// the next header. Every other line is kept as it is. A server written in
// another form (an inline table, dotted keys) is not changed: the check
// after each edit finds it and the edit fails.
type tomlEditor struct {
	lines []string // each with its line ending
}

func newTOMLEditor(data []byte) (*tomlEditor, error) {
	if _, err := decodeTOML(data); err != nil {
		return nil, err
	}
	return &tomlEditor{lines: strings.SplitAfter(string(data), "\n")}, nil
}

func decodeTOML(data []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

func (t *tomlEditor) bytes() []byte { return []byte(strings.Join(t.lines, "")) }

func (t *tomlEditor) doc() map[string]any {
	doc, err := decodeTOML(t.bytes())
	if err != nil {
		return nil
	}
	return doc
}

func (t *tomlEditor) servers() map[string]any {
	s, _ := t.doc()["mcp_servers"].(map[string]any)
	return s
}

func (t *tomlEditor) names() []string {
	var doc map[string]any
	md, err := toml.Decode(string(t.bytes()), &doc)
	if err != nil {
		return nil
	}
	var ns []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" && !seen[k[1]] {
			seen[k[1]] = true
			ns = append(ns, k[1])
		}
	}
	return ns
}

// normalize makes a decoded TOML value comparable with another: through
// JSON, so that integer and table types agree.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func (t *tomlEditor) value(name string) (any, bool) {
	v, ok := t.servers()[name]
	if !ok {
		return nil, false
	}
	return normalize(v), true
}

func (t *tomlEditor) rest() (any, error) {
	doc, err := decodeTOML(t.bytes())
	if err != nil {
		return nil, err
	}
	delete(doc, "mcp_servers")
	return normalize(doc), nil
}

// header parses a table header line into its key, or nil.
func header(line string) []string {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "[") {
		return nil
	}
	s = strings.TrimPrefix(s, "[")
	arr := strings.HasPrefix(s, "[")
	if arr {
		s = s[1:]
	}
	var key []string
	for {
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, `"`):
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil
			}
			var k string
			if json.Unmarshal([]byte(s[:end+1]), &k) != nil {
				return nil
			}
			key = append(key, k)
			s = s[end+1:]
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil
			}
			key = append(key, s[1:end+1])
			s = s[end+2:]
		default:
			end := 0
			for end < len(s) && (isAlnum(s[end]) || s[end] == '_' || s[end] == '-') {
				end++
			}
			if end == 0 {
				return nil
			}
			key = append(key, s[:end])
			s = s[end:]
		}
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, ".") {
			s = s[1:]
			continue
		}
		if arr {
			if !strings.HasPrefix(s, "]]") {
				return nil
			}
			return key
		}
		if !strings.HasPrefix(s, "]") {
			return nil
		}
		return key
	}
}

// ranges returns the line ranges [start, end) of the tables of server
// name, without the comments and blank lines that end a range (they lead
// into the next table).
func (t *tomlEditor) ranges(name string) [][2]int {
	var out [][2]int
	start := -1
	floor := 0 // the end of the last range
	closeAt := func(end int) {
		for end > start+1 {
			s := strings.TrimSpace(t.lines[end-1])
			if s != "" && !strings.HasPrefix(s, "#") {
				break
			}
			end--
		}
		out = append(out, [2]int{start, end})
		start, floor = -1, end
	}
	for i, l := range t.lines {
		h := header(l)
		if h == nil {
			continue
		}
		if start >= 0 {
			closeAt(i)
		}
		if len(h) >= 2 && h[0] == "mcp_servers" && h[1] == name {
			// Comment lines right above the header belong to the table.
			start = i
			for start > floor && strings.HasPrefix(strings.TrimSpace(t.lines[start-1]), "#") {
				start--
			}
		}
	}
	if start >= 0 {
		closeAt(len(t.lines))
	}
	return out
}

// cut removes the ranges, and the blank lines after each where a blank
// line already comes before it.
func (t *tomlEditor) cut(rs [][2]int) {
	blank := func(i int) bool { return i >= 0 && i < len(t.lines) && strings.TrimSpace(t.lines[i]) == "" }
	for i := len(rs) - 1; i >= 0; i-- {
		start, end := rs[i][0], rs[i][1]
		if start == 0 || blank(start-1) {
			for blank(end) && t.lines[end] != "" {
				end++
			}
		}
		t.lines = append(t.lines[:start], t.lines[end:]...)
	}
}

func (t *tomlEditor) remove(name string) error {
	if _, ok := t.servers()[name]; !ok {
		return nil
	}
	t.cut(t.ranges(name))
	if _, ok := t.servers()[name]; ok {
		return fmt.Errorf("server %q is not written as a [mcp_servers.%s] table; edit it by hand", name, name)
	}
	return nil
}

// insert puts text (whole lines) at line i, or appends it after a blank
// line when i < 0.
func (t *tomlEditor) insert(i int, text string) {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	add := strings.SplitAfter(text, "\n")
	if add[len(add)-1] == "" {
		add = add[:len(add)-1]
	}
	if i < 0 {
		if n := len(t.lines); n > 0 && t.lines[n-1] == "" {
			t.lines = t.lines[:n-1]
		}
		if n := len(t.lines); n > 0 {
			if !strings.HasSuffix(t.lines[n-1], "\n") {
				t.lines[n-1] += "\n"
			}
			if strings.TrimSpace(t.lines[n-1]) != "" {
				t.lines = append(t.lines, "\n")
			}
		}
		t.lines = append(t.lines, add...)
		return
	}
	if i < len(t.lines) && strings.TrimSpace(t.lines[i]) != "" {
		add = append(add, "\n")
	}
	t.lines = append(t.lines[:i], append(add, t.lines[i:]...)...)
}

func (t *tomlEditor) set(name string, e Entry) error {
	e.Name = name
	text, err := renderTOML(e)
	if err != nil {
		return err
	}
	at := -1
	if _, ok := t.servers()[name]; ok {
		rs := t.ranges(name)
		if len(rs) == 0 {
			return fmt.Errorf("server %q is not written as a [mcp_servers.%s] table; edit it by hand", name, name)
		}
		at = rs[0][0]
		t.cut(rs)
		if _, ok := t.servers()[name]; ok {
			return fmt.Errorf("server %q is not written as a [mcp_servers.%s] table; edit it by hand", name, name)
		}
	}
	t.insert(at, string(text))
	return nil
}

func (t *tomlEditor) copyFrom(from editor, name string) error {
	f, ok := from.(*tomlEditor)
	if !ok {
		return errors.New("copy between formats")
	}
	var b strings.Builder
	for _, r := range f.ranges(name) {
		b.WriteString(strings.Join(f.lines[r[0]:r[1]], ""))
	}
	if b.Len() == 0 {
		return fmt.Errorf("server %q is not written as a [mcp_servers.%s] table; restore it by hand", name, name)
	}
	t.insert(-1, b.String())
	return nil
}
