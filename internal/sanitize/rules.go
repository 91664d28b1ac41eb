package sanitize

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The patterns follow the published tool-poisoning attacks (Invariant Labs,
// "MCP Security Notification: Tool Poisoning Attacks", April 2025, and the
// shadowing and rug-pull variants after it). Every matcher here is a plain
// scan: cost is linear in the text with a small constant per pattern, and
// nothing backtracks over more than a few words.

// --- hidden_block ---

// hiddenTagWords are the tag names, or parts of hyphenated ones, that mark
// text as addressed to the model: <IMPORTANT>, <system-reminder>,
// </instructions>. Presentational HTML (<b>, <code>, <br>) is not flagged.
var hiddenTagWords = map[string]bool{
	"important": true, "critical": true,
	"system": true, "sys": true,
	"instruction": true, "instructions": true, "inst": true,
	"secret": true, "hidden": true,
}

// hiddenLiterals are the other hidden-block markers: Llama's [INST] and CSS
// that hides an element from a rendered view but not from the model.
var hiddenLiterals = compileLiterals(hiddenBlock,
	`[ inst ]`,
	`[ / inst ]`,
	`display : none`,
	`visibility : hidden`,
)

// markupAt reports whether low[i] == '<' starts an HTML comment, a chat
// template token such as <|im_start|> or a hidden-block tag, and where it
// ends. Each check looks at a bounded number of bytes.
func markupAt(low string, i int) (end int, ok bool) {
	rest := low[i+1:]
	switch {
	case strings.HasPrefix(rest, "!--[if ") || strings.HasPrefix(rest, "!--[endif]"):
		// A conditional comment (<!--[if mso]>, <!--[endif]-->) is HTML's
		// markup for mail clients, which descriptions of e-mail tools
		// explain: the comment holds markup, not hidden prose. The other
		// rules still read whatever it holds.
		return 0, false
	case strings.HasPrefix(rest, "!--"):
		// A comment hides its content from rendered Markdown; quote as much
		// of it as a Flag shows.
		end = i + len("<!--")
		window := low[end:min(len(low), i+MatchMax)]
		if k := strings.Index(window, "-->"); k >= 0 {
			return end + k + len("-->"), true
		}
		return i + len("<!--") + len(window), true
	case strings.HasPrefix(rest, "|"):
		// <|im_start|>, <|system|>, <|endoftext|>: no honest description
		// contains a model's special tokens.
		k := 1
		for k < len(rest) && k <= 32 && (byteClass[rest[k]]&cClass == cWord || rest[k] == '_') {
			k++
		}
		if k > 1 && strings.HasPrefix(rest[k:], "|>") {
			return i + 1 + k + len("|>"), true
		}
		return 0, false
	}
	k := 0
	if strings.HasPrefix(rest, "/") {
		k++
	}
	for k < len(rest) && k < 3 && rest[k] == ' ' {
		k++
	}
	nameStart := k
	for k < len(rest) && k-nameStart <= 40 && isTagByte(rest[k]) {
		k++
	}
	if k == nameStart || k == len(rest) || !isTagEnd(rest[k]) {
		return 0, false
	}
	if !suspiciousTag(rest[nameStart:k]) {
		return 0, false
	}
	// Quote through the '>' when only spaces come before it.
	end = i + 1 + k
	for n := 0; n < maxSep && k < len(rest) && rest[k] == ' '; n++ {
		k++
	}
	if k < len(rest) && rest[k] == '>' {
		end = i + 1 + k + 1
	}
	return end, true
}

func isTagByte(c byte) bool {
	return byteClass[c]&cClass == cWord || c == '_' || c == '-' || c == ':' || c == '.'
}

func isTagEnd(c byte) bool {
	return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n'
}

// suspiciousTag reports whether a tag name, or one of its parts, is in
// hiddenTagWords, or is a Gemma turn marker.
func suspiciousTag(name string) bool {
	if name == "start_of_turn" || name == "end_of_turn" {
		return true
	}
	for name != "" {
		i := strings.IndexAny(name, "_-:.")
		if i < 0 {
			return hiddenTagWords[name]
		}
		if hiddenTagWords[name[:i]] {
			return true
		}
		name = name[i+1:]
	}
	return false
}

// --- credential ---

// credentialLiterals name credentials and the files that hold them. Many
// honest tools mention them (a password-reset tool, a tool that takes an API
// key): the flag tells a reviewer where to look, it does not block.
var credentialLiterals = compileLiterals(credential,
	`\b.ssh\b`, // ~/.ssh, .ssh/authorized_keys
	`\bid_rsa`,
	`\bid_dsa`,
	`\bid_ecdsa`,
	`\bid_ed25519`,
	`\b.env\b`, // .env, .env.local; not process.env or .environment
	`.aws/`,
	`\b.netrc\b`,
	`\b.npmrc\b`,
	`\b.pypirc\b`,
	`\b.pgpass\b`,
	`private key`,
	`secret key`,
	`api key`, // api key, api_key, apikey, API-Key, getApiKey
	`access token`,
	`password`,
	`passwd`,
	`passphrase`,
	`seed phrase`,
	`credential`, // .aws/credentials, .git-credentials
	`mcp.json`,   // other servers' configuration, with their secrets
	`claude_desktop_config`,
	`.cursor/`,
)

// --- literal matcher ---

// literal is a case-folded pattern of words. Between two words the text may
// have up to maxSep separator bytes (space, tab, newline, '_', '-'), so
// "api key" matches "api_key", "API-Key" and "apikey".
type literal struct {
	rule        ruleID
	parts       []string
	left, right bool // require a non-word character (or the text's edge) before, after
}

const maxSep = 3

func isSep(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '_' || c == '-'
}

// compileLiterals parses patterns: words separated by spaces, with `\b` at
// either end requiring a word boundary there. It panics on a malformed
// pattern, so a mistake fails every test.
func compileLiterals(rule ruleID, patterns ...string) []literal {
	ls := make([]literal, len(patterns))
	for i, p := range patterns {
		l := &ls[i]
		l.rule = rule
		p, l.left = strings.CutPrefix(p, `\b`)
		p, l.right = strings.CutSuffix(p, `\b`)
		l.parts = strings.Fields(p)
		if len(l.parts) == 0 {
			panic(fmt.Sprintf("sanitize: empty literal %q", patterns[i]))
		}
		for _, part := range l.parts {
			if part != fold(part) || isSep(part[0]) || isSep(part[len(part)-1]) {
				panic(fmt.Sprintf("sanitize: bad literal %q", patterns[i]))
			}
		}
	}
	return ls
}

// literalIndex lists the literals by their first byte, so the text is
// read once however many literals there are. markerPairs has a bit for
// every pair of bytes that can start a literal or markup ('<' followed by
// anything); almost every position of a text fails that test alone.
var literalIndex, markerPairs = func() (index [256][]*literal, pairs [1 << 16 / 64]uint64) {
	set := func(c, next byte) {
		k := uint(c)<<8 | uint(next)
		pairs[k/64] |= 1 << (k % 64)
	}
	for _, ls := range [][]literal{hiddenLiterals, credentialLiterals} {
		for i := range ls {
			p := ls[i].parts[0]
			index[p[0]] = append(index[p[0]], &ls[i])
			for next := range 256 {
				if len(p) == 1 || p[1] == byte(next) {
					set(p[0], byte(next))
				}
			}
		}
	}
	for next := range 256 {
		set('<', byte(next))
	}
	return index, pairs
}()

// findMarkers returns the first hidden-block marker and the first
// credential in low, in one pass: the first credential that a directive
// moves (see [moves]) when there is one, else the first, with plain set.
// words are low's words.
func findMarkers(low string, words []span) (hidden, cred hit, plain bool) {
	var found [numRules]hit
	var firstCred hit // the first credential, while no directive moves one
	for i := 0; i < len(low); i++ {
		k := uint(low[i]) << 8
		if i+1 < len(low) {
			k |= uint(low[i+1])
		}
		if markerPairs[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		c := low[i]
		if c == '<' && !found[hiddenBlock].found() {
			if end, ok := markupAt(low, i); ok {
				found[hiddenBlock] = hit{i, end}
			}
		}
		for _, l := range literalIndex[c] {
			if found[l.rule].found() {
				continue
			}
			if end, ok := l.matchAt(low, i); ok {
				h := hit{i, end}
				if l.rule == credential && !moves(low, words, h) {
					if !firstCred.found() {
						firstCred = h
					}
					continue
				}
				found[l.rule] = h
			}
		}
		if found[hiddenBlock].found() && found[credential].found() {
			break
		}
	}
	if !found[credential].found() && firstCred.found() {
		return found[hiddenBlock], firstCred, true
	}
	return found[hiddenBlock], found[credential], false
}

// matchAt reports whether l matches low at start, and where the match ends.
// It reads a bounded number of bytes.
func (l *literal) matchAt(low string, start int) (int, bool) {
	if l.left && start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(low[:start]); isWord(r) {
			return 0, false
		}
	}
	end := start
	for k, part := range l.parts {
		for n := 0; k > 0 && n < maxSep && end < len(low) && isSep(low[end]); n++ {
			end++
		}
		if !strings.HasPrefix(low[end:], part) {
			return 0, false
		}
		end += len(part)
	}
	if l.right && end < len(low) {
		if r, _ := utf8.DecodeRuneInString(low[end:]); isWord(r) {
			return 0, false
		}
	}
	return end, true
}

// --- override and secrecy: phrases ---

// phraseSources are word patterns. Words are separated by spaces; a slot
// "a|b" matches either word; "do+not" is a sequence of words within one
// alternative; "[...]" makes a slot optional; a final ":" requires a colon
// after the last word. Text is split into words at every non-letter, so
// "don't" is "don t", and "ignore_previous-instructions" is three words.
var phraseSources = []struct {
	rule ruleID
	src  string
}{
	{override, "ignore|disregard|skip [all|any] [of] [the|your|my|these|those] previous|prior|above|earlier|preceding|former|foregoing|original instructions|instruction|rules|directions|directives|prompts|prompt|guidelines|guidance|context|messages"},
	{override, "forget [all|everything|any] [of] [the|your|my|these|those] previous|prior|above|earlier|preceding|former|foregoing|original"},
	{override, "you are|re now"},
	{override, "new|updated|revised|real|actual [system] instructions|instruction|rules|directives :"},
	{override, "system prompt|prompts"},
	// A bare "override" is how honest tools describe their options ("override
	// the default branch"), so only an override of instructions, or a
	// heading "OVERRIDE:", is flagged.
	{override, "override :"},
	{override, "override [all|any] [of] [the|your|any|these|those|all] [previous|prior|above|earlier|original|system|safety|existing|other] instructions|instruction|rules|guidelines|directions|directives|restrictions|safeguards|policies|policy|prompt|prompts"},

	{secrecy, "do+not|don+t|dont|never|must+not|mustn+t|should+not|shouldn+t tell|inform|mention|notify|alert|reveal|disclose [it|this|that|anything] [to] [the|your] user|users|human"},
	{secrecy, "do+not|don+t|dont|never reveal|disclose"},
	{secrecy, "do+not|don+t|dont|never mention|say|admit|indicate that you"},
	{secrecy, "without telling|informing|notifying|alerting [it|this|that|anything] [to] [the|your] user|users|human"},
	{secrecy, "without [the|your] user|users knowing|noticing|realizing|realising"},
	{secrecy, "user|users must+not|mustn+t|should+not|shouldn+t|must+never|should+never|cannot|can+t|can+not|won+t know|notice|learn|discover|find+out|be+told|be+informed|be+aware"},
	{secrecy, "keep this|it|that|these|everything|the+following secret|hidden|confidential|between+us|to+yourself"},
}

type phrase struct {
	rule  ruleID
	slots []slot
	colon bool // a ':' must follow the last word
}

type slot struct {
	alts     [][]string // each alternative is a sequence of words
	optional bool
}

// phrases and phraseIndex, which lists by first byte the words that can
// start a phrase, are built once from phraseSources.
var phrases, phraseIndex = compilePhrases()

// phraseStart is a word that can start a phrase, and the phrases it starts.
type phraseStart struct {
	word    string
	phrases []int // indexes into phrases, ascending
}

func compilePhrases() ([]phrase, *[256][]phraseStart) {
	ps := make([]phrase, len(phraseSources))
	index := new([256][]phraseStart)
	for i, src := range phraseSources {
		p := &ps[i]
		p.rule = src.rule
		fields := strings.Fields(src.src)
		if n := len(fields); n > 0 && fields[n-1] == ":" {
			p.colon, fields = true, fields[:n-1]
		}
		for _, f := range fields {
			var sl slot
			if inner, ok := strings.CutPrefix(f, "["); ok {
				f, sl.optional = strings.TrimSuffix(inner, "]"), true
			}
			for alt := range strings.SplitSeq(f, "|") {
				ws := strings.Split(alt, "+")
				for _, w := range ws {
					if ws, _ := tokenize(w, false); w != fold(w) || len(ws) != 1 || ws[0] != (span{0, len(w)}) {
						panic(fmt.Sprintf("sanitize: bad word %q in phrase %q", w, src.src))
					}
				}
				sl.alts = append(sl.alts, ws)
			}
			p.slots = append(p.slots, sl)
		}
		// The index needs a first word to look up.
		if len(p.slots) == 0 || p.slots[0].optional {
			panic(fmt.Sprintf("sanitize: phrase %q must start with a required slot", src.src))
		}
		for _, alt := range p.slots[0].alts {
			starts := &index[alt[0][0]]
			k := slices.IndexFunc(*starts, func(st phraseStart) bool { return st.word == alt[0] })
			if k < 0 {
				*starts = append(*starts, phraseStart{word: alt[0]})
				k = len(*starts) - 1
			}
			if l := (*starts)[k].phrases; len(l) == 0 || l[len(l)-1] != i {
				(*starts)[k].phrases = append(l, i)
			}
		}
	}
	return ps, index
}

// findPhrases returns the first override and the first secrecy phrase in
// low, given its words. It looks up each word once; only the few phrases
// that start with it are tried.
func findPhrases(low string, ws []span) (overrideHit, secrecyHit hit) {
	var found [numRules]hit
	for i, w := range ws {
		for _, pi := range phrasesStartingWith(low[w.start:w.end]) {
			p := &phrases[pi]
			if found[p.rule].found() {
				continue
			}
			if end, ok := p.match(low, ws, 0, i); ok {
				found[p.rule] = hit{w.start, end}
			}
		}
		if found[override].found() && found[secrecy].found() {
			break
		}
	}
	return found[override], found[secrecy]
}

// phrasesStartingWith returns the phrases that can start with word.
func phrasesStartingWith(word string) []int {
	for _, st := range phraseIndex[word[0]] {
		if st.word == word {
			return st.phrases
		}
	}
	return nil
}

// match reports whether p's slots from si on match the words of low from wi
// on, and where the match ends. Only optional slots and alternatives of
// different lengths branch, a handful per phrase, so the work per starting
// word is bounded by the phrase, not the text.
func (p *phrase) match(low string, ws []span, si, wi int) (int, bool) {
	if si == len(p.slots) {
		end := ws[wi-1].end
		if !p.colon {
			return end, true
		}
		for n := 0; n < maxSep && end < len(low) && (low[end] == ' ' || low[end] == '\t'); n++ {
			end++
		}
		if end < len(low) && low[end] == ':' {
			return end + 1, true
		}
		return 0, false
	}
	sl := &p.slots[si]
	for _, alt := range sl.alts {
		if wi+len(alt) > len(ws) || !wordsEqual(low, ws[wi:wi+len(alt)], alt) {
			continue
		}
		if end, ok := p.match(low, ws, si+1, wi+len(alt)); ok {
			return end, true
		}
	}
	if sl.optional {
		return p.match(low, ws, si+1, wi)
	}
	return 0, false
}

func wordsEqual(low string, ws []span, want []string) bool {
	for k, w := range want {
		if low[ws[k].start:ws[k].end] != w {
			return false
		}
	}
	return true
}
