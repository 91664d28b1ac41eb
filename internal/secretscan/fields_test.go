package secretscan

import "testing"

// TestAsksFor: form fields that ask for a credential, by key, title,
// description or format, and the hard negatives beside them: counted
// tokens, key words that are not keys, secrets that are only mentioned.
func TestAsksFor(t *testing.T) {
	for _, tc := range []struct {
		f    Field
		want string
	}{
		{Field{Name: "password"}, AskPassword},
		{Field{Name: "db_password"}, AskPassword},
		{Field{Name: "userPassword"}, AskPassword},
		{Field{Name: "value", Format: "password"}, AskPassword},
		{Field{Name: "pass", Title: "Your passphrase"}, AskPassword},
		{Field{Name: "pin"}, AskPassword},
		{Field{Name: "token"}, AskToken},
		{Field{Name: "github_token"}, AskToken},
		{Field{Name: "accessToken"}, AskToken},
		{Field{Name: "apiKey"}, AskToken},
		{Field{Name: "OPENAI_API_KEY"}, AskToken},
		{Field{Name: "apikey"}, AskToken},
		{Field{Name: "client_secret"}, AskToken},
		{Field{Name: "secret"}, AskToken},
		{Field{Name: "AWSSecretAccessKey"}, AskToken},
		{Field{Name: "ssh_private_key"}, AskToken},
		{Field{Name: "key", Title: "API key"}, AskToken},
		{Field{Name: "value", Description: "Paste your personal access token here."}, AskToken},
		{Field{Name: "cardNumber"}, AskCard},
		{Field{Name: "cc_number"}, AskCard},
		{Field{Name: "cvv"}, AskCard},
		{Field{Name: "number", Title: "Credit card"}, AskCard},
		{Field{Name: "code", Title: "Security code"}, AskCard},
		{Field{Name: "otp"}, AskCode},
		{Field{Name: "code", Title: "Verification code"}, AskCode},
		{Field{Name: "mfa_code"}, AskCode},
		{Field{Name: "code", Description: "The one-time code from your authenticator app"}, AskCode},

		{Field{Name: "username"}, ""},
		{Field{Name: "email", Title: "E-mail address"}, ""},
		{Field{Name: "max_tokens"}, ""},
		{Field{Name: "maxTokens"}, ""},
		{Field{Name: "token_count"}, ""},
		{Field{Name: "tokens", Title: "Tokens to spend"}, ""},
		{Field{Name: "keyword"}, ""},
		{Field{Name: "key", Title: "Sort key"}, ""},
		{Field{Name: "secretary"}, ""},
		{Field{Name: "passenger_name"}, ""},
		{Field{Name: "zip_code"}, ""},
		{Field{Name: "code", Title: "Country code"}, ""},
		{Field{Name: "repository", Description: "Which repository to open. No token is needed."}, ""},
		{Field{Name: "card_title"}, ""},
		{Field{Name: "spinner"}, ""},
		{Field{Name: "confirm", Description: "Delete the key named above?"}, ""},
	} {
		if got := AsksFor(tc.f); got != tc.want {
			t.Errorf("AsksFor(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestWords: identifiers split as people write them.
func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"apiKey":             "api key",
		"APIKey":             "api key",
		"OPENAI_API_KEY":     "openai api key",
		"AWSSecretAccessKey": "aws secret access key",
		"card-number 2":      "card number 2",
		"cvv2":               "cvv2",
	} {
		got := ""
		for i, w := range words(in) {
			if i > 0 {
				got += " "
			}
			got += w
		}
		if got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}
