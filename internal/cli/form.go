package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/huh"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func editCommand(r *run) *command {
	return &command{
		name: "edit", args: "NAME",
		summary:  "change a server in a form at a terminal, after checking that it starts (a blank secret keeps the stored one, - removes it)",
		examples: []string{"switchboard edit files"},
		flags: func(fs *pflag.FlagSet) {
			r.edit.scopeFlag(fs)
			r.edit.noVerifyFlag(fs)
		},
		run:      runEdit,
		complete: firstServer,
	}
}

// The form: `switchboard add` with no arguments at a terminal, and
// `switchboard edit NAME`. It asks for the transport, the URL or command,
// the name, and the secrets (a bearer token and one header for HTTP,
// environment variables for a command, each a name shown as typed and a
// value masked), masked while typed; Save is the last step's default.
// Saving checks the server as add does; a failure reopens the form with
// the error and the values kept. Esc or Ctrl-C leaves it with nothing
// written (exit 130). In edit, a blank secret keeps the stored one and
// "-" removes it.

// envSlots is how many environment entries one pass of the form takes.
const envSlots = 8

// storedHint is the placeholder of a secret the server has now.
const storedHint = "(stored; blank keeps it, - removes it)"

// formValues are the form's fields.
type formValues struct {
	transport string // "http", "sse" or "stdio"
	url       string
	command   string // as in a shell
	name      string // "" is the suggestion
	bearer    string
	hdrName   string
	hdrValue  string
	// envName and envValue are the environment's entries, one per pair
	// of fields: the name shown as typed, the value masked.
	envName  [envSlots]string
	envValue [envSlots]string
	trust    bool
	save     bool
}

// current is what an edited server has now.
type current struct {
	name    string
	obj     *confedit.Object // as written
	argv    []string         // command and args as written
	command string           // argv as the form shows it
	bearer  bool             // Authorization is a Bearer credential
	hdrName string           // the header the form edits, "" when none
	env     []string         // the environment's keys
	trusted bool
	// transport is the one the server had: http, sse or stdio.
	transport string
	otherRef  map[string]bool // credentials other servers reference
}

// bearerRef matches an Authorization value the form wrote.
var bearerRef = regexp.MustCompile(`^Bearer \$\{cred:[A-Za-z0-9_.-]+\}$`)

// formInput returns the terminal the form reads, when stdin and stderr
// are both terminals.
func (r *run) formInput() (*os.File, bool) {
	f, ok := r.env.Stdin.(*os.File)
	return f, ok && isTerminal(f) && r.terminal()
}

// runEdit changes a server in the form: switchboard edit NAME.
func runEdit(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	in, ok := r.formInput()
	if !ok {
		return r.usagef("edit opens a form: run it at a terminal (or use remove and add-json)")
	}
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	data, err := confedit.ReadFile(path)
	if err != nil {
		return r.configError(err)
	}
	doc, err := confedit.ParseObject(data)
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err))
	}
	servers, err := doc.Object(serversKey(doc))
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err))
	}
	name := r.args[0]
	if _, ok := servers.Get(name); !ok {
		return r.usagef("%v", errNoServer(name, path, servers))
	}
	obj, err := servers.Object(name)
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err))
	}
	cur := &current{name: name, obj: obj, otherRef: map[string]bool{}}
	for _, m := range servers.Members {
		if m.Key != name {
			for _, ref := range credRefs.FindAllStringSubmatch(string(m.Value), -1) {
				cur.otherRef[ref[1]] = true
			}
		}
	}
	v := cur.prefill()
	return r.form(in, path, v, cur)
}

// prefill reads the form's values from the server's configuration.
func (c *current) prefill() *formValues {
	str := func(key string) string {
		var s string
		if raw, ok := c.obj.Get(key); ok {
			json.Unmarshal(raw, &s) //nolint:errcheck // not a string: ""
		}
		return s
	}
	v := &formValues{url: str("url"), trust: str("trust") == string(config.TrustTrusted)}
	c.trusted = v.trust
	switch {
	case str("type") == "sse":
		v.transport = "sse"
	case v.url != "":
		v.transport = "http"
	default:
		v.transport = "stdio"
		if cmd := str("command"); cmd != "" {
			c.argv = []string{cmd}
		}
		if raw, ok := c.obj.Get("args"); ok {
			var args []string
			json.Unmarshal(raw, &args) //nolint:errcheck // not strings: none
			c.argv = append(c.argv, args...)
		}
		c.command = shellQuote(c.argv)
		v.command = c.command
	}
	if h, err := c.obj.Object("headers"); err == nil {
		for _, m := range h.Members {
			var s string
			json.Unmarshal(m.Value, &s) //nolint:errcheck // not a string: a header like any other
			if strings.EqualFold(m.Key, "Authorization") && bearerRef.MatchString(s) {
				c.bearer = true
			} else if c.hdrName == "" {
				c.hdrName = m.Key
			}
		}
	}
	v.hdrName = c.hdrName
	if env, err := c.obj.Object("env"); err == nil {
		for _, m := range env.Members {
			c.env = append(c.env, m.Key)
		}
	}
	c.transport = v.transport
	return v
}

// form runs the form until the server is saved or the form is left.
// cur is the server edited, nil for add.
func (r *run) form(in *os.File, path string, v *formValues, cur *current) int {
	if path == "" {
		p, err := r.editPath()
		if err != nil {
			return r.usagef("%v", err)
		}
		path = p
	}
	taken := r.serverNames(path)
	var problem string
	for {
		v.save = true // Save is the default answer: Enter on the last step saves
		err := r.newForm(v, cur, taken, problem).WithInput(in).WithOutput(r.env.Stderr).RunWithContext(r.ctx)
		if code, ok := r.interrupted(); ok {
			return r.report(code, failure{Code: codeInterrupted, Message: "interrupted"}, "nothing was written")
		}
		if errors.Is(err, huh.ErrUserAborted) || errors.Is(err, huh.ErrTimeout) || (err == nil && !v.save) {
			return r.report(ExitInterrupted, failure{Code: codeInterrupted, Message: "cancelled"}, "nothing was written")
		}
		if err != nil {
			return r.failf(ExitUsage, codeError, "the form: %v", err)
		}
		e, apply, drop, err := v.entry(path, cur)
		if err != nil {
			problem = err.Error()
			continue
		}
		se := r.check(path, e, apply)
		if code, ok := r.interrupted(); ok {
			return r.report(code, failure{Code: codeInterrupted, Message: "interrupted"}, "nothing was written")
		}
		if se != nil {
			problem = se.f.Message
			fmt.Fprintf(r.env.Stderr, "not saved: %s\n", launcher.Escape(oneLine(problem, 400)))
			continue
		}
		if se := r.write(path, e, apply, drop); se != nil {
			return r.reportSave(se)
		}
		verb := "added server %q to %s"
		if cur != nil {
			verb = "changed server %q in %s"
		}
		return r.done(fmt.Sprintf(verb, e.name, path), e.name, path, sortedKeys(e.creds))
	}
}

// serverNames returns the names of the servers in the file at path.
func (r *run) serverNames(path string) []string {
	data, err := confedit.ReadFile(path)
	if err != nil {
		return nil
	}
	doc, err := confedit.ParseObject(data)
	if err != nil {
		return nil
	}
	servers, err := doc.Object(serversKey(doc))
	if err != nil {
		return nil
	}
	var names []string
	for _, m := range servers.Members {
		names = append(names, m.Key)
	}
	return names
}

// suggestion is the name the server gets when the name is left blank.
func (v *formValues) suggestion() string {
	if v.transport == "stdio" {
		argv, err := SplitCommand(v.command)
		if err != nil {
			return "server"
		}
		return SuggestName("", argv)
	}
	return SuggestName(strings.TrimSpace(v.url), nil)
}

// serverName is the name given, else the suggestion.
func (v *formValues) serverName() string {
	if n := strings.TrimSpace(v.name); n != "" {
		return n
	}
	return v.suggestion()
}

// newForm builds the form over v; problem is why the last save failed.
func (r *run) newForm(v *formValues, cur *current, taken []string, problem string) *huh.Form {
	isStdio := func() bool { return v.transport == "stdio" }
	title := "Add a server"
	if cur != nil {
		title = fmt.Sprintf("Edit server %q", cur.name)
	}
	var first []huh.Field
	first = append(first, huh.NewNote().Title(title).Description("Esc or Ctrl-C leaves without saving."))
	if problem != "" {
		first = append(first, huh.NewNote().Title("Not saved").Description(noteText(problem)+"\n\nFix the values and save again, or press Esc."))
	}
	first = append(first, huh.NewSelect[string]().Title("Transport").Options(
		huh.NewOption("Streamable HTTP", "http"),
		huh.NewOption("stdio: a command this machine runs", "stdio"),
		huh.NewOption("legacy HTTP+SSE", "sse"),
	).Value(&v.transport))

	secret := func(title, desc string, val *string, stored bool) *huh.Input {
		in := huh.NewInput().Title(title).Description(desc).EchoMode(huh.EchoModePassword).Value(val)
		if stored {
			in.Placeholder(storedHint)
		}
		return in
	}
	groups := []*huh.Group{
		huh.NewGroup(first...),
		huh.NewGroup(huh.NewInput().Title("URL").Description("where the server answers: http:// or https://").Placeholder("https://mcp.example.com/mcp").Value(&v.url).Validate(func(s string) error {
			if !isURL(strings.TrimSpace(s)) {
				return errors.New("an http:// or https:// URL with a host")
			}
			return nil
		})).WithHideFunc(isStdio),
		huh.NewGroup(huh.NewInput().Title("Command").Description("as in a shell: quotes are honoured, no shell runs").
			Placeholder("npx -y @modelcontextprotocol/server-filesystem /srv/docs").Value(&v.command).Validate(func(s string) error {
			argv, err := SplitCommand(s)
			if err != nil {
				return err
			}
			if len(argv) == 0 {
				return errors.New("a command to run")
			}
			return nil
		})).WithHideFunc(func() bool { return !isStdio() }),
	}
	if cur == nil {
		bound := []*string{&v.transport, &v.url, &v.command} // what the suggestion depends on
		groups = append(groups, huh.NewGroup(huh.NewInput().Title("Name").
			DescriptionFunc(func() string { return "blank: " + v.suggestion() }, bound).
			PlaceholderFunc(v.suggestion, bound).Value(&v.name).Validate(func(s string) error {
			name := strings.TrimSpace(s)
			if name == "" {
				name = v.suggestion()
			}
			if strings.ContainsAny(name, " \t\n") {
				return errors.New("a name without spaces")
			}
			for _, t := range taken {
				if strings.EqualFold(t, name) {
					return fmt.Errorf("there is a server %q already", t)
				}
			}
			return nil
		})))
	}
	var bearerStored, hdrStored bool
	if cur != nil {
		bearerStored, hdrStored = cur.bearer, cur.hdrName != ""
	}
	groups = append(groups,
		huh.NewGroup(
			secret("Bearer token", "sent as 'Authorization: Bearer'; kept in creds.json", &v.bearer, bearerStored),
			huh.NewInput().Title("Header name").Description("one more header to send, blank for none").Value(&v.hdrName).Validate(func(s string) error {
				if strings.ContainsAny(s, ": \t") {
					return errors.New("a header name, without ':' or spaces")
				}
				return nil
			}),
			secret("Header value", "kept in creds.json", &v.hdrValue, hdrStored),
			huh.NewConfirm().Title("Trust this server?").Description("a server on this machine or the LAN is reached only when trusted").Value(&v.trust),
		).WithHideFunc(isStdio),
	)
	groups = append(groups, v.envGroups(cur, isStdio)...)
	groups = append(groups,
		huh.NewGroup(huh.NewConfirm().Title("Save?").Description("The server is checked first: it must start and answer.").
			Affirmative("Save").Negative("Cancel").Value(&v.save)),
	)
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithKeys("ctrl+c", "esc"))
	return huh.NewForm(groups...).WithKeyMap(km).WithShowHelp(true)
}

// noteText is s escaped for a note, which reads _ * ` and \\ as markup,
// its control characters shown escaped.
func noteText(s string) string {
	s = launcher.Escape(s)
	return strings.NewReplacer(`\`, `\\`, "_", `\_`, "*", `\*`, "`", "\\`").Replace(s)
}

// envGroups are the environment's fields of a stdio server: pairs of a
// name, shown as typed, and a value, masked (it is kept in creds.json when
// it is a secret). A pair shows once the name before it is filled in; a
// blank name ends the list. For an edited server the stored names are
// listed: a stored name with a blank value keeps its value, "-" as the
// value removes it, and "-" as a name removes them all.
func (v *formValues) envGroups(cur *current, isStdio func() bool) []*huh.Group {
	desc := "its name; blank when there is no more"
	if cur != nil && len(cur.env) > 0 {
		desc = "stored: " + strings.Join(cur.env, ", ") + ". A name sets or removes one (its value blank keeps it, - removes it); - removes them all; blank: no more"
	}
	stored := func(name string) bool { return cur != nil && slices.Contains(cur.env, strings.TrimSpace(name)) }
	var groups []*huh.Group
	for i := range envSlots {
		name, value := &v.envName[i], &v.envValue[i]
		shown := func() bool {
			return isStdio() && (i == 0 || strings.TrimSpace(v.envName[i-1]) != "" && strings.TrimSpace(v.envName[i-1]) != "-")
		}
		d := desc
		if i > 0 {
			d = "the next one's name; blank when there is no more"
		}
		groups = append(groups,
			huh.NewGroup(huh.NewInput().Title(fmt.Sprintf("Environment variable %d", i+1)).Description(d).Value(name).Validate(func(s string) error {
				s = strings.TrimSpace(s)
				if s == "" || s == "-" {
					return nil
				}
				if strings.ContainsAny(s, "=${} \t") {
					return errors.New("a variable's name, without '=', '$', braces or spaces")
				}
				return nil
			})).WithHideFunc(func() bool { return !shown() }),
			huh.NewGroup(huh.NewInput().
				TitleFunc(func() string { return "Value of " + strings.TrimSpace(*name) }, name).
				DescriptionFunc(func() string {
					if stored(*name) {
						return storedHint
					}
					return "masked; kept in creds.json when it is a secret"
				}, name).
				EchoMode(huh.EchoModePassword).Value(value)).
				WithHideFunc(func() bool { n := strings.TrimSpace(*name); return !shown() || n == "" || n == "-" }),
		)
	}
	return groups
}

// envEntries are the form's environment entries in order: {name, value},
// {"-", ""} for removing them all, {name, "-"} for removing one. A stored
// name (cur) with a blank value is left out: it keeps its value.
func (v *formValues) envEntries(cur *current) ([][2]string, error) {
	var out [][2]string
	for i := range envSlots {
		k := strings.TrimSpace(v.envName[i])
		switch {
		case k == "":
			return out, nil
		case k == "-":
			out = append(out, [2]string{"-", ""})
			return out, nil
		case strings.ContainsAny(k, "=${} \t"):
			return nil, fmt.Errorf("environment variable %q: a name without '=', '$', braces or spaces", k)
		case v.envValue[i] == "" && cur != nil && slices.Contains(cur.env, k):
			continue
		}
		out = append(out, [2]string{k, v.envValue[i]})
	}
	return out, nil
}

// entry builds the server the form describes, the edit that saves it in
// the file at path, and the credentials that edit leaves unused. For an
// edited server (cur), what the form does not show is kept, and so is a
// secret left blank.
func (v *formValues) entry(path string, cur *current) (*entry, func(*confedit.Object) error, []string, error) {
	f := entryFlags{trust: v.trust}
	var rawURL string
	var argv []string
	stdio := v.transport == "stdio"
	if stdio {
		if cur != nil && v.command == cur.command && len(cur.argv) > 0 {
			argv = cur.argv // as written: references stay references
		} else {
			words, err := SplitCommand(v.command)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("the command: %v", err)
			}
			argv = words
		}
		if len(argv) == 0 {
			return nil, nil, nil, errors.New("no command")
		}
	} else {
		rawURL = strings.ReplaceAll(strings.TrimSpace(v.url), "${", "$${")
		if v.transport == "sse" {
			f.transport = "sse"
		}
	}
	env, err := v.envEntries(cur)
	if err != nil {
		return nil, nil, nil, err
	}
	if stdio {
		for _, kv := range env {
			if kv[0] != "-" && kv[1] != "-" {
				f.env = append(f.env, kv[0]+"="+kv[1])
			}
		}
	} else {
		if v.bearer != "" && v.bearer != "-" {
			f.bearer = v.bearer
		}
		if v.hdrName != "" && v.hdrValue != "" && v.hdrValue != "-" {
			f.headers = []string{v.hdrName + ": " + v.hdrValue}
		}
	}
	name := strings.TrimSpace(v.serverName())
	if cur != nil {
		name = cur.name
	}
	e, err := entryOf(name, rawURL, argv, &f)
	if err != nil {
		return nil, nil, nil, err
	}
	if cur == nil {
		return e, addServer(path, e), nil, nil
	}
	obj, err := v.merge(e, cur, env)
	if err != nil {
		return nil, nil, nil, err
	}
	e.obj = obj
	// The credentials the server referenced and no longer does, and no
	// other server does.
	after, _ := obj.MarshalJSON()
	now := map[string]bool{}
	for _, m := range credRefs.FindAllStringSubmatch(string(after), -1) {
		now[m[1]] = true
	}
	before, _ := cur.obj.MarshalJSON()
	var drop []string
	e.own = map[string]bool{}
	for _, m := range credRefs.FindAllStringSubmatch(string(before), -1) {
		if !cur.otherRef[m[1]] {
			e.own[m[1]] = true
		}
		if !now[m[1]] && !cur.otherRef[m[1]] && !slices.Contains(drop, m[1]) {
			drop = append(drop, m[1])
		}
	}
	replace := func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			if _, ok := servers.Get(name); !ok {
				return errNoServer(name, path, servers)
			}
			return servers.SetValue(name, obj)
		})
	}
	return e, replace, drop, nil
}

// merge is the edited server's new configuration: the old one with the
// form's fields (those of e) set, and the secrets left blank kept.
func (v *formValues) merge(e *entry, cur *current, env [][2]string) (*confedit.Object, error) {
	data, _ := cur.obj.MarshalJSON()
	obj, err := confedit.ParseObject(data)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"type", "url", "command", "args"} {
		if val, ok := e.obj.Get(k); ok {
			obj.Set(k, val)
		} else if k != "type" || v.transport != "http" || cur.transport == "sse" || len(cur.argv) > 0 {
			obj.Delete(k) // a type the server had for Streamable HTTP stays
		}
	}
	switch {
	case v.trust:
		obj.SetValue("trust", string(config.TrustTrusted))
	case cur.trusted:
		obj.Delete("trust")
	}
	wasStdio := len(cur.argv) > 0
	newEnv, err := e.obj.Object("env")
	if err != nil {
		return nil, err
	}
	newHdr, err := e.obj.Object("headers")
	if err != nil {
		return nil, err
	}
	if v.transport == "stdio" {
		obj.Delete("headers")
		out := &confedit.Object{}
		if wasStdio {
			if out, err = cur.obj.Object("env"); err != nil {
				return nil, err
			}
		}
		for _, kv := range env {
			switch {
			case kv[0] == "-":
				out = &confedit.Object{}
			case kv[1] == "-":
				out.Delete(kv[0])
			default:
				val, _ := newEnv.Get(kv[0])
				out.Set(kv[0], val)
			}
		}
		setOrDelete(obj, "env", out)
		return obj, nil
	}
	obj.Delete("env")
	out := &confedit.Object{}
	if !wasStdio {
		if out, err = cur.obj.Object("headers"); err != nil {
			return nil, err
		}
	}
	auth := "Authorization"
	for _, m := range out.Members {
		if strings.EqualFold(m.Key, auth) {
			auth = m.Key
		}
	}
	switch v.bearer {
	case "":
	case "-":
		out.Delete(auth)
	default:
		val, _ := newHdr.Get("Authorization")
		out.Delete(auth)
		out.Set("Authorization", val)
	}
	old, hadOld := json.RawMessage(nil), false
	if cur.hdrName != "" {
		old, hadOld = out.Get(cur.hdrName)
		out.Delete(cur.hdrName)
	}
	switch {
	case v.hdrName == "" || v.hdrValue == "-":
	case v.hdrValue == "" && hadOld:
		out.Set(v.hdrName, old)
	case v.hdrValue != "":
		val, _ := newHdr.Get(v.hdrName)
		out.Set(v.hdrName, val)
	}
	setOrDelete(obj, "headers", out)
	return obj, nil
}

// setOrDelete sets key to o, or deletes it when o is empty.
func setOrDelete(obj *confedit.Object, key string, o *confedit.Object) {
	if len(o.Members) == 0 {
		obj.Delete(key)
		return
	}
	obj.SetValue(key, o)
}
