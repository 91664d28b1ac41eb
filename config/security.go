package config

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/policy"
)

// Trust is how far Switchboard trusts a server. Every server is untrusted
// unless its configuration says otherwise; docs/SECURITY.md lists what each
// level controls.
type Trust string

// The trust levels.
const (
	// TrustTrusted: the operator vouches for the server. Remote URLs may
	// be private or loopback addresses, annotations are honoured, sampling,
	// elicitation and roots are forwarded.
	TrustTrusted Trust = "trusted"
	// TrustUntrusted (the default): a remote URL must resolve to a public
	// address, annotations never relax a rule, sampling is refused unless
	// the server says "sampling": true, flagged tools are held back until
	// approved (see Security.OnInjection), unexpected tools (see
	// ExpectedTools) are withheld.
	TrustUntrusted Trust = "untrusted"
	// TrustSandboxed: untrusted, and also: only EnabledTools are exposed
	// (which must be given), no sampling, elicitation or roots, no images.
	TrustSandboxed Trust = "sandboxed"
)

// Level returns t, or TrustUntrusted for the zero value (a Server built by
// hand).
func (t Trust) Level() Trust {
	if t == "" {
		return TrustUntrusted
	}
	return t
}

func parseTrust(s string) (Trust, bool) {
	switch t := Trust(s); t {
	case TrustTrusted, TrustUntrusted, TrustSandboxed:
		return t, true
	}
	return "", false
}

// Security holds the limits Switchboard applies to what servers send. A
// zero field means its default (the Default* constants); Parse fills every
// field.
type Security struct {
	// Strict holds back the tools of untrusted and sandboxed servers whose
	// metadata matches an injection pattern, whatever OnInjection says, and
	// no approval releases them: only trusting the server does. A server's
	// own "strict" overrides it. Default false.
	Strict bool
	// OnInjection ("onInjection") is what happens to a tool of an
	// untrusted or sandboxed server whose metadata matches an injection
	// pattern: InjectionHold (the default) holds it back — not listed,
	// calls refused — until `switchboard approve server:tool` approves
	// that definition (a later change holds it again); InjectionFlag only
	// reports it. A trusted server's tools are only reported.
	OnInjection string
	// OnLaunchChange ("onLaunchChange") is what happens to a server whose
	// launch (transport, command, arguments, environment variable names
	// and a hash of their values that are not secret, working directory,
	// URL, header names) differs from the one a person approved, or that
	// appeared in the configuration without one: LaunchHold (the default)
	// holds it — not started, not dialled, its tools not offered — until
	// `switchboard approve SERVER`; LaunchWarn starts it and logs what
	// LaunchHold would have held; LaunchOff neither checks nor pins
	// launches. See docs/PINS.md.
	OnLaunchChange string
	// WrapUntrustedResults wraps each text block of an untrusted or
	// sandboxed server's tool results in per-call nonce delimiters that mark
	// it as data. Default false.
	WrapUntrustedResults bool
	// Secrets ("secrets") is what happens to credentials in tool calls'
	// arguments and results; see SecretsPolicy.
	Secrets SecretsPolicy

	MaxToolsPerServer    int // tools kept per server; more are dropped with a warning
	DescriptionMaxBytes  int // tool, prompt, resource descriptions and titles
	InstructionsMaxBytes int // a server's instructions
	SchemaMaxDepth       int // JSON nesting depth of an input or output schema
	SchemaMaxBytes       int // size of a schema
	SchemaMaxSubschemas  int // JSON objects in a schema
	ResultTextMaxBytes   int // per text block of a result; longer text is cut with a marker
	ResultMaxBlocks      int // content blocks per result
	StructuredMaxDepth   int // nesting depth of a result's structuredContent
	ImageMaxBytes        int // decoded size of an image (also audio and blobs)
	ImageMaxSide         int // pixels on either side
	ImageMaxPixels       int // width × height
	ImagesPerResult      int // images kept per result; more become placeholders
}

// Security defaults.
const (
	DefaultMaxToolsPerServer    = 512
	DefaultDescriptionMaxBytes  = 2048
	DefaultInstructionsMaxBytes = 16 << 10
	DefaultSchemaMaxDepth       = 32
	DefaultSchemaMaxBytes       = 256 << 10
	DefaultSchemaMaxSubschemas  = 2048
	DefaultResultTextMaxBytes   = 100 << 10
	DefaultResultMaxBlocks      = 64
	DefaultStructuredMaxDepth   = 32
	DefaultImageMaxBytes        = 5 << 20
	DefaultImageMaxSide         = 8192
	DefaultImageMaxPixels       = 64_000_000
	DefaultImagesPerResult      = 4
)

// Security.OnInjection values.
const (
	InjectionHold = "hold"
	InjectionFlag = "flag"
)

// Security.OnLaunchChange values.
const (
	LaunchHold = "hold"
	LaunchWarn = "warn"
	LaunchOff  = "off"
)

// launchModes are the values of Security.OnLaunchChange.
var launchModes = []string{LaunchHold, LaunchWarn, LaunchOff}

// WithDefaults returns s with every zero limit set to its default, an
// empty OnInjection set to InjectionHold and an empty OnLaunchChange to
// LaunchHold.
func (s Security) WithDefaults() Security {
	if s.OnInjection == "" {
		s.OnInjection = InjectionHold
	}
	s.Secrets = s.Secrets.WithDefaults()
	if s.OnLaunchChange == "" {
		s.OnLaunchChange = LaunchHold
	}
	for _, f := range s.limits() {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return s
}

type limitField struct {
	key string
	v   *int
	def int
	max int
}

// limits lists the numeric fields with their JSON keys, defaults and upper
// bounds (a bound keeps a typo from disabling a limit in practice).
func (s *Security) limits() []limitField {
	return []limitField{
		{"maxToolsPerServer", &s.MaxToolsPerServer, DefaultMaxToolsPerServer, 100_000},
		{"descriptionMaxBytes", &s.DescriptionMaxBytes, DefaultDescriptionMaxBytes, 1 << 20},
		{"instructionsMaxBytes", &s.InstructionsMaxBytes, DefaultInstructionsMaxBytes, 1 << 20},
		{"schemaMaxDepth", &s.SchemaMaxDepth, DefaultSchemaMaxDepth, 1000},
		{"schemaMaxBytes", &s.SchemaMaxBytes, DefaultSchemaMaxBytes, 64 << 20},
		{"schemaMaxSubschemas", &s.SchemaMaxSubschemas, DefaultSchemaMaxSubschemas, 1_000_000},
		{"resultTextMaxBytes", &s.ResultTextMaxBytes, DefaultResultTextMaxBytes, 1 << 30},
		{"resultMaxBlocks", &s.ResultMaxBlocks, DefaultResultMaxBlocks, 1_000_000},
		{"structuredMaxDepth", &s.StructuredMaxDepth, DefaultStructuredMaxDepth, 1000},
		{"imageMaxBytes", &s.ImageMaxBytes, DefaultImageMaxBytes, 1 << 30},
		{"imageMaxSide", &s.ImageMaxSide, DefaultImageMaxSide, 1 << 20},
		{"imageMaxPixels", &s.ImageMaxPixels, DefaultImageMaxPixels, 1 << 40},
		{"imagesPerResult", &s.ImagesPerResult, DefaultImagesPerResult, 10_000},
	}
}

// Policy holds the authorization rules for tool calls.
type Policy struct {
	// Rules are ordered; the first whose pattern matches a tool's canonical
	// ID ("server:tool") decides. No match: Default.
	Rules []Rule
	// Default is "allow" (the default) or "deny".
	Default string
	// Confirm says which calls need a person's confirmation: "never" (the
	// default), "destructive" (tools whose effective annotations say
	// destructive: for servers that are not trusted, every tool not
	// declared read-only... see docs/SECURITY.md) or "always".
	Confirm string
	// OnConfirm is what the gateway does with a call that needs
	// confirmation: "elicit" (ask the calling client's user, the default;
	// refused when the client cannot elicit) or "deny".
	OnConfirm string
	// Quota limits calls per process (Go API, CLI) or per gateway client.
	Quota Quota
	// Approve names the calls a person must approve ("approve"); its
	// defaults are Approve.WithDefaults'.
	Approve Approve
	// Flow is the data-flow guard ("flow"); its defaults are
	// Flow.WithDefaults'.
	Flow Flow
}

// Rule is one authorization rule.
type Rule struct {
	Action  string // "allow" or "deny"
	Pattern string // glob over canonical tool IDs: * ? [...] and \ escapes; * also matches ':'
	// Clients and Profiles ("clients", "profiles"), when not empty, limit
	// the rule to calls from those named clients and through those
	// profiles.
	Clients, Profiles []string
}

// Quota is a call budget: at most Calls calls per Per. Zero Calls means
// no quota.
type Quota struct {
	Calls int
	Per   time.Duration
}

// Policy values.
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"

	ConfirmNever       = "never"
	ConfirmDestructive = "destructive"
	ConfirmAlways      = "always"

	OnConfirmElicit = "elicit"
	OnConfirmDeny   = "deny"
)

// WithDefaults returns p with empty fields set to their defaults.
func (p Policy) WithDefaults() Policy {
	if p.Default == "" {
		p.Default = ActionAllow
	}
	if p.Confirm == "" {
		p.Confirm = ConfirmNever
	}
	if p.OnConfirm == "" {
		p.OnConfirm = OnConfirmElicit
	}
	return p
}

// loaderVars are environment variables that change how a program is loaded
// or which code an interpreter runs before the server's own: set by a
// malicious or careless configuration, they run code inside the server's
// process. A server's env may set them only when its "allowEnv" names them.
var loaderVars = []string{
	"LD_*", "DYLD_*", "_RLD*", "LIBPATH", "SHLIB_PATH", "GCONV_PATH", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS",
	"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "ELECTRON_RUN_AS_NODE",
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PYTHONEXECUTABLE", "PYTHONWARNINGS",
	"BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB",
	"RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
	"MALLOC_CHECK_", "MALLOC_PERTURB_",
}

// LoaderVar reports whether name is an environment variable that can make
// a program load or run code other than its own (LD_PRELOAD, NODE_OPTIONS,
// PYTHONPATH, BASH_ENV, ...), and returns the pattern it matches.
func LoaderVar(name string) (string, bool) {
	for _, p := range loaderVars {
		if strings.HasSuffix(p, "*") {
			if strings.HasPrefix(name, p[:len(p)-1]) {
				return p, true
			}
		} else if name == p {
			return p, true
		}
	}
	return "", false
}

// decodeSecurity decodes the top-level "security" object.
func (d *decoder) decodeSecurity(n *node, p *jsonPath) Security {
	var s Security
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return s.WithDefaults()
	}
	fields := s.limits()
	known := []string{"strict", "wrapUntrustedResults", "onInjection", "secrets", "onLaunchChange"}
	for _, f := range fields {
		known = append(known, f.key)
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "strict":
			s.Strict, _ = d.boolean(m.val, fp, "")
			continue
		case "wrapUntrustedResults":
			s.WrapUntrustedResults, _ = d.boolean(m.val, fp, "")
			continue
		case "secrets":
			s.Secrets = d.decodeSecrets(m.val, fp)
			continue
		case "onInjection":
			s.OnInjection = d.oneOf(m.val, fp, InjectionHold, InjectionFlag)
			continue
		case "onLaunchChange":
			s.OnLaunchChange = d.oneOf(m.val, fp, launchModes...)
			continue
		}
		found := false
		for _, f := range fields {
			if f.key == m.key {
				found = true
				if v, ok := d.integer(m.val, fp, "", 1, f.max); ok {
					*f.v = v
				}
			}
		}
		if !found {
			d.unknown(fp, m.key, known, nil, "")
		}
	}
	return s.WithDefaults()
}

// decodePolicy decodes the top-level "policy" object.
func (d *decoder) decodePolicy(n *node, p *jsonPath) Policy {
	var pol Policy
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return pol.WithDefaults()
	}
	known := []string{"rules", "default", "confirm", "onConfirm", "quota", "approve", "flow"}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "rules":
			pol.Rules = d.decodeRules(m.val, fp)
		case "default":
			pol.Default = d.oneOf(m.val, fp, ActionAllow, ActionDeny)
		case "confirm":
			pol.Confirm = d.oneOf(m.val, fp, ConfirmNever, ConfirmDestructive, ConfirmAlways)
		case "onConfirm":
			pol.OnConfirm = d.oneOf(m.val, fp, OnConfirmElicit, OnConfirmDeny)
		case "quota":
			pol.Quota = d.decodeQuota(m.val, fp)
		case "approve":
			pol.Approve = d.decodeApprove(m.val, fp)
		case "flow":
			pol.Flow = d.decodeFlow(m.val, fp)
		default:
			d.unknown(fp, m.key, known, nil, "")
		}
	}
	return pol.WithDefaults()
}

// decodeRules decodes [{"allow": "glob"} | {"deny": "glob"}, ...].
func (d *decoder) decodeRules(n *node, p *jsonPath) []Rule {
	if n.kind != kindArray {
		d.wrongType(n, p, "", `array of {"allow": pattern} or {"deny": pattern}`)
		return nil
	}
	rules := make([]Rule, 0, len(n.elems))
	for i, e := range n.elems {
		ep := p.i(i)
		if e.kind != kindObject {
			d.add(ep, "", `want an object with exactly one member, "allow" or "deny", whose value is a pattern`, nil)
			continue
		}
		var r Rule
		var actions []member
		bad := false
		for _, m := range e.members {
			switch m.key {
			case ActionAllow, ActionDeny:
				actions = append(actions, m)
			case "clients", "profiles":
				v, ok := d.strs(m.val, ep.k(m.key), "")
				if !ok {
					bad = true
					continue
				}
				if m.key == "clients" {
					r.Clients = append([]string{}, v...)
				} else {
					r.Profiles = append([]string{}, v...)
				}
			default:
				d.unknown(ep.k(m.key), m.key, []string{ActionAllow, ActionDeny, "clients", "profiles"}, nil, "")
				bad = true
			}
		}
		if len(actions) != 1 {
			if !bad {
				d.add(ep, "", `want an object with exactly one member, "allow" or "deny", whose value is a pattern`, nil)
			}
			continue
		}
		m := actions[0]
		pat, ok := d.str(m.val, ep.k(m.key), "")
		if !ok || bad {
			continue
		}
		if msg := checkPattern(pat); msg != "" {
			d.add(ep.k(m.key), "", msg, nil)
			continue
		}
		r.Action, r.Pattern = m.key, pat
		rules = append(rules, r)
	}
	return rules
}

func (d *decoder) decodeQuota(n *node, p *jsonPath) Quota {
	var q Quota
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return q
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "calls":
			q.Calls, _ = d.integer(m.val, fp, "", 1, 1<<31-1)
		case "perMs":
			q.Per, _ = d.millis(m.val, fp, "")
		default:
			d.unknown(fp, m.key, []string{"calls", "perMs"}, nil, "")
		}
	}
	if q.Calls > 0 && q.Per == 0 {
		d.add(p, "", `"calls" needs "perMs", the window the calls are counted in`, nil)
	}
	if q.Per > 0 && q.Calls == 0 {
		d.add(p, "", `"perMs" needs "calls"`, nil)
	}
	return q
}

// integer decodes an integer in [lo, hi].
func (d *decoder) integer(n *node, p *jsonPath, server string, lo, hi int) (int, bool) {
	if n.kind != kindNumber {
		d.wrongType(n, p, server, "number")
		return 0, false
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		d.add(p, server, "want an integer", nil)
		return 0, false
	}
	if err != nil || v < int64(lo) || v > int64(hi) {
		d.add(p, server, fmt.Sprintf("must be between %d and %d", lo, hi), nil)
		return 0, false
	}
	return int(v), true
}

// checkPattern checks a policy pattern's syntax, as the policy engine
// will compile it.
func checkPattern(p string) string {
	if p == "" {
		return "empty pattern"
	}
	if _, err := policy.CompileGlob(p); err != nil {
		var pe *policy.PatternError
		if errors.As(err, &pe) {
			return fmt.Sprintf("malformed pattern %s: %s at offset %d", quote(p), pe.Problem, pe.Offset)
		}
		return fmt.Sprintf("malformed pattern %s: %v", quote(p), err)
	}
	return ""
}

// checkEnvNames refuses loader variables in a server's env unless allowEnv
// names them.
func (d *decoder) checkEnvNames(s *Server, f *rawServer, p *jsonPath) {
	for i, a := range f.allowEnv.v {
		if _, bad := LoaderVar(a); !bad {
			d.add(p.k("allowEnv").i(i), s.Name, fmt.Sprintf("%s is not a loader variable; only those need allowing", quote(a)), nil)
		}
	}
	if !f.env.set {
		return
	}
	allowed := map[string]bool{}
	for _, a := range f.allowEnv.v {
		allowed[a] = true
	}
	for _, k := range f.env.v.keys {
		if pat, bad := LoaderVar(k); bad && !allowed[k] {
			msg := fmt.Sprintf("%s changes which code the server's program loads or runs", quote(k))
			if pat != k {
				msg += fmt.Sprintf(" (it matches %s)", quote(pat))
			}
			msg += `; remove it, or name it in "allowEnv" to allow it for this server`
			d.add(p.k("env").k(k), s.Name, msg, nil)
		}
	}
}

// resolveTrust applies the trust level and its defaults to s.
func (d *decoder) resolveTrust(s *Server, f *rawServer, p *jsonPath) {
	s.Trust = TrustUntrusted
	if f.trust.set {
		t, ok := parseTrust(f.trust.v)
		if !ok {
			d.add(p.k("trust"), s.Name, fmt.Sprintf(`unknown trust level %s: want "trusted", "untrusted" or "sandboxed"`, quote(f.trust.v)), nil)
			return
		}
		s.Trust = t
	}
	s.ExpectedTools = f.expectedTools.v
	s.AllowEnv = f.allowEnv.v
	defaults := TrustDefaults(s.Trust)
	s.Sampling, s.Elicitation, s.Roots, s.Images = defaults.Sampling, defaults.Elicitation, defaults.Roots, defaults.Images
	s.Strict = d.security.Strict
	for _, o := range []struct {
		v   opt[bool]
		dst *bool
		key string
	}{{f.sampling, &s.Sampling, "sampling"}, {f.elicitation, &s.Elicitation, "elicitation"}, {f.roots, &s.Roots, "roots"}, {f.images, &s.Images, "images"}, {f.strict, &s.Strict, "strict"}} {
		if !o.v.set {
			continue
		}
		if s.Trust == TrustSandboxed && o.v.v && o.key != "strict" {
			d.add(p.k(o.key), s.Name, fmt.Sprintf(`a sandboxed server cannot have %q; use "trust": "untrusted"`, o.key), nil)
			continue
		}
		*o.dst = o.v.v
	}
	if s.Trust == TrustSandboxed && !f.enabledTools.set {
		d.add(p, s.Name, `a sandboxed server exposes only the tools its "enabledTools" lists: add it`, nil)
	}
}

// Abilities are what a server may do beyond answering requests.
type Abilities struct {
	Sampling, Elicitation, Roots, Images bool
}

// TrustDefaults returns the abilities a trust level grants when the
// server's configuration does not say.
func TrustDefaults(t Trust) Abilities {
	switch t {
	case TrustTrusted:
		return Abilities{Sampling: true, Elicitation: true, Roots: true, Images: true}
	case TrustSandboxed:
		return Abilities{}
	}
	// Untrusted: asking the person (elicitation, which names the server)
	// and seeing the roots the client shares are part of ordinary use;
	// sampling spends the client's model on the server's text, so it is
	// opt-in.
	return Abilities{Elicitation: true, Roots: true, Images: true}
}

// validateSecurity checks a hand-built Config's security and policy.
func (c *Config) validateSecurity(add func(p *jsonPath, msg string)) {
	sec := c.Security
	sp := (*jsonPath)(nil).k("security")
	for _, f := range sec.limits() {
		if *f.v < 0 || *f.v > f.max {
			add(sp.k(f.key), fmt.Sprintf("must be between 1 and %d (0 means the default)", f.max))
		}
	}
	if o := sec.OnInjection; o != "" && o != InjectionHold && o != InjectionFlag {
		add(sp.k("onInjection"), fmt.Sprintf("unknown value %s: want %s", quote(o), quoteList([]string{InjectionHold, InjectionFlag})))
	}
	validateSecrets(sec.Secrets, sp.k("secrets"), add)
	if o := sec.OnLaunchChange; o != "" && !slices.Contains(launchModes, o) {
		add(sp.k("onLaunchChange"), fmt.Sprintf("unknown value %s: want %s", quote(o), quoteList(launchModes)))
	}
	pp := (*jsonPath)(nil).k("policy")
	for i, r := range c.Policy.Rules {
		if r.Action != ActionAllow && r.Action != ActionDeny {
			add(pp.k("rules").i(i), fmt.Sprintf("unknown action %s", quote(r.Action)))
		}
		if msg := checkPattern(r.Pattern); msg != "" {
			add(pp.k("rules").i(i), msg)
		}
	}
	check := func(key, v string, values ...string) {
		if v == "" {
			return
		}
		for _, w := range values {
			if v == w {
				return
			}
		}
		add(pp.k(key), fmt.Sprintf("unknown value %s: want %s", quote(v), quoteList(values)))
	}
	check("default", c.Policy.Default, ActionAllow, ActionDeny)
	check("confirm", c.Policy.Confirm, ConfirmNever, ConfirmDestructive, ConfirmAlways)
	check("onConfirm", c.Policy.OnConfirm, OnConfirmElicit, OnConfirmDeny)
	if q := c.Policy.Quota; q.Calls < 0 || q.Per < 0 || (q.Calls > 0) != (q.Per > 0) {
		add(pp.k("quota"), "want both calls and a window, or neither")
	}
	validateApprovals(c.Policy, pp, add)
}

// validateTrust checks a hand-built server's trust fields.
func validateTrust(s *Server, p *jsonPath, add func(*jsonPath, string)) {
	if _, ok := parseTrust(string(s.Trust)); !ok && s.Trust != "" {
		add(p.k("trust"), fmt.Sprintf(`unknown trust level %s: want "trusted", "untrusted" or "sandboxed"`, quote(string(s.Trust))))
	}
	if s.Trust == TrustSandboxed {
		if s.EnabledTools == nil {
			add(p, `a sandboxed server exposes only the tools its "enabledTools" lists: add it`)
		}
		if s.Sampling || s.Elicitation || s.Roots || s.Images {
			add(p, "a sandboxed server cannot have sampling, elicitation, roots or images")
		}
	}
	allowed := map[string]bool{}
	for _, a := range s.AllowEnv {
		allowed[a] = true
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, bad := LoaderVar(k); bad && !allowed[k] {
			add(p.k("env").k(k), fmt.Sprintf(`%s changes which code the server's program loads or runs; remove it, or name it in "allowEnv"`, quote(k)))
		}
	}
	for i, g := range s.ExpectedTools {
		if msg := checkGlob(g); msg != "" {
			add(p.k("expectedTools").i(i), msg)
		}
	}
}

func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " or " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// oneOf decodes the string at n (path p), which must be one of values; a
// value outside them is an error naming them, and "".
func (d *decoder) oneOf(n *node, p *jsonPath, values ...string) string {
	v, ok := d.str(n, p, "")
	if !ok {
		return ""
	}
	if slices.Contains(values, v) {
		return v
	}
	d.add(p, "", fmt.Sprintf("unknown value %s: want %s", quote(v), quoteList(values)), nil)
	return ""
}
