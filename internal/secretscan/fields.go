package secretscan

import (
	"strings"
	"unicode"
)

// A form that asks a person for a value (an MCP elicitation) may ask for
// a credential. The specification says servers must not ask for one in a
// form (a URL leg is the way), so a field that looks like one is worth
// telling the person about, or refusing.

// Field is one field of a form: its key and what its schema says of it.
type Field struct {
	Name        string // the property's key
	Title       string
	Description string
	Format      string // JSON Schema "format"
}

// Kinds of credential a field may ask for.
const (
	AskPassword = "password" // a password, passphrase or PIN
	AskToken    = "token"    // an API key, access token, secret or private key
	AskCard     = "card"     // a payment card's number or security code
	AskCode     = "code"     // a one-time or recovery code
)

// AsksFor returns the kind of credential field f asks for, "" when it
// looks like none. Its key and title are read word by word (snake, kebab
// and camel case split); its description only for the phrases that
// cannot mean anything else ("password", "API key", "access token",
// "card number", …). A plural or counted "tokens" (max_tokens,
// token_count) is not a credential.
func AsksFor(f Field) string {
	if strings.EqualFold(f.Format, "password") {
		return AskPassword
	}
	if k := wordsAsk(words(f.Name)); k != "" {
		return k
	}
	if k := wordsAsk(words(f.Title)); k != "" {
		return k
	}
	return phraseAsk(words(f.Description))
}

// words splits s into lower-case words at every non-alphanumeric rune and
// at camel-case humps (apiKey, APIKey, cardNumber).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// single words that ask for a credential wherever they stand.
var askWord = map[string]string{
	"password": AskPassword, "passwd": AskPassword, "pwd": AskPassword, "passphrase": AskPassword,
	"passcode": AskPassword, "pin": AskPassword,
	"apikey": AskToken, "secret": AskToken, "credential": AskToken, "credentials": AskToken,
	"bearer": AskToken, "pat": AskToken,
	"cvv": AskCard, "cvc": AskCard, "cvv2": AskCard, "cvc2": AskCard, "cardnumber": AskCard, "ccnumber": AskCard,
	"otp": AskCode, "totp": AskCode,
}

// pairs of adjacent words that ask for one.
var askPair = map[[2]string]string{
	{"api", "key"}: AskToken, {"access", "key"}: AskToken, {"secret", "key"}: AskToken,
	{"private", "key"}: AskToken, {"ssh", "key"}: AskToken, {"signing", "key"}: AskToken,
	{"client", "secret"}: AskToken, {"auth", "key"}: AskToken,
	{"card", "number"}: AskCard, {"credit", "card"}: AskCard, {"debit", "card"}: AskCard,
	{"cc", "number"}: AskCard, {"security", "code"}: AskCard, {"card", "code"}: AskCard,
	{"verification", "code"}: AskCode, {"recovery", "code"}: AskCode, {"recovery", "codes"}: AskCode,
	{"backup", "code"}: AskCode, {"mfa", "code"}: AskCode, {"2fa", "code"}: AskCode,
	{"one", "time"}: AskCode, {"auth", "code"}: AskCode,
}

// tokenCounters are the words that make a following or preceding "token"
// a count of a model's tokens.
var tokenCounters = map[string]bool{"max": true, "min": true, "num": true, "count": true, "limit": true, "budget": true, "per": true, "total": true}

// wordsAsk classifies a key's or title's words.
func wordsAsk(ws []string) string {
	for i, w := range ws {
		if i+1 < len(ws) {
			if k := askPair[[2]string{w, ws[i+1]}]; k != "" {
				return k
			}
		}
		if k := askWord[w]; k != "" {
			return k
		}
		if w == "token" {
			if (i > 0 && tokenCounters[ws[i-1]]) || (i+1 < len(ws) && tokenCounters[ws[i+1]]) {
				continue
			}
			return AskToken
		}
	}
	return ""
}

// phrases a description may carry that ask for a credential whatever
// surrounds them.
var askPhrase = []struct {
	ws   []string
	kind string
}{
	{[]string{"password"}, AskPassword}, {[]string{"passphrase"}, AskPassword},
	{[]string{"api", "key"}, AskToken}, {[]string{"apikey"}, AskToken}, {[]string{"access", "token"}, AskToken},
	{[]string{"personal", "access"}, AskToken}, {[]string{"secret", "key"}, AskToken}, {[]string{"private", "key"}, AskToken},
	{[]string{"client", "secret"}, AskToken}, {[]string{"refresh", "token"}, AskToken}, {[]string{"auth", "token"}, AskToken},
	{[]string{"card", "number"}, AskCard}, {[]string{"cvv"}, AskCard}, {[]string{"cvc"}, AskCard},
	{[]string{"one", "time", "code"}, AskCode}, {[]string{"verification", "code"}, AskCode},
}

// phraseAsk classifies a description by its unambiguous phrases.
func phraseAsk(ws []string) string {
	for i := range ws {
		for _, p := range askPhrase {
			if i+len(p.ws) <= len(ws) && equalWords(ws[i:i+len(p.ws)], p.ws) {
				return p.kind
			}
		}
	}
	return ""
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
