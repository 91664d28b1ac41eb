// Package tokens estimates how many tokens a text takes in a model's
// context, without a tokenizer: it serves `switchboard servers --tokens`,
// which tells people what each server's tool
// definitions cost so that they can see what to defer. It imports nothing
// from Switchboard, does no I/O and allocates nothing.
//
// # What it counts
//
// [Estimate] imitates the pre-tokenisation step of OpenAI's BPE
// tokenizers (o200k_base, cl100k_base) and then guesses how many tokens
// each piece becomes:
//
//   - a word (letters, split where a lower-case letter is followed by an
//     upper-case one, as "entityType" → "entity", "Type"), together with
//     one punctuation character or blank directly before it ("_files",
//     " the"): one token up to 9 bytes of letters, plus one for each
//     further 5 bytes or part of them ("simultaneously" 1 + 1; a random
//     200-letter identifier 40). Bytes, not characters, so that Cyrillic
//     or Greek, two bytes a letter, come out dearer than English, as they
//     are;
//   - letters of three or more UTF-8 bytes (CJK, kana, ...): two tokens
//     for three characters;
//   - digits: one token per group of up to three;
//   - a run of punctuation (JSON's `":{"`, `"},"`): one token per 5 bytes
//     or part of them;
//   - line breaks with the indentation after them: one token; two or
//     more blanks before a word: one; a blank before a digit: one;
//   - a byte that is not valid UTF-8: one token.
//
// The estimate is never more than the number of bytes.
//
// # How good it is
//
// testdata/reference.json holds 372 texts: the tool definitions of ten
// servers (compact JSON of name, description and inputSchema, as in
// internal/search/testdata: three real servers, seven synthetic), some
// pretty-printed, their descriptions alone, a Go snippet, and four
// non-English sentences, each with its token count under o200k_base and
// cl100k_base (js-tiktoken 1.0.21, whose vocabularies ship in the npm
// package) and under Anthropic's legacy Claude tokenizer
// (@anthropic-ai/tokenizer 0.0.4), counted offline. The four constants
// were fitted to o200k_base on half of the texts (every other tool) and
// measured on the other half. On that held-out half:
//
//	reference         per-text error (mean, worst)   error of the sum
//	o200k_base        4.0%, 28.6%                     +0.9%
//	cl100k_base       4.8%, 25.0%                     +2.6%
//	Claude (legacy)   5.9%, 65.9%                     -2.9%
//	(bytes/4 vs o200k 20.2%,                         +16.2%)
//
// The worst cases are identifiers of random letters, which BPE splits
// more finely than words. Non-English text is known only from four
// sentences: 10.8% mean error against o200k_base, but cl100k_base takes
// about a quarter more tokens for them than estimated. Claude 3 and later
// use a tokenizer that Anthropic has not published (the legacy one is for
// Claude 2); Anthropic's token-counting endpoint needs the network, so
// the figures for current Claude models are not measured here, and they
// are known to be higher than OpenAI's for the same text. Treat the
// estimate as good to about 5% on a server's total for OpenAI models and
// as a relative measure (which server costs more) for the others.
//
// TestReferenceError prints these figures (go test -v -run Reference) and
// fails if they drift past its bounds.
package tokens
