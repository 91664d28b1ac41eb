package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestStoreParse: "store" is parsed strictly, its URL expanded and
// checked, and no error quotes the URL.
func TestStoreParse(t *testing.T) {
	const servers = `"mcpServers": {"a": {"command": "x"}}`
	env := fakeEnv{
		"DATABASE_URL": "postgres://sb:s3cret@db.example:5432/switchboard",
		"NOT_A_URL":    "mysql://sb:s3cret@db.example/x",
		"EMPTY":        "",
	}
	tests := []struct {
		name, store string
		want        string // Store.Postgres
		wantErr     string // in the error; "" for none
	}{
		{"absent: SQLite", ``, "", ""},
		{"empty object: SQLite", `"store": {}`, "", ""},
		{"literal URL", `"store": {"postgres": "postgresql://db.example/x"}`, "postgresql://db.example/x", ""},
		{"from the environment", `"store": {"postgres": "${DATABASE_URL}"}`, env["DATABASE_URL"], ""},
		{"default", `"store": {"postgres": "${UNSET:-postgres://localhost/x}"}`, "postgres://localhost/x", ""},
		{"variable not set", `"store": {"postgres": "${UNSET}"}`, "",
			`store.postgres: environment variable "UNSET" is not set`},
		{"variable empty", `"store": {"postgres": "${EMPTY}"}`, "", `store.postgres: after expansion, must not be empty`},
		{"empty", `"store": {"postgres": ""}`, "", `store.postgres: must not be empty`},
		{"not postgres", `"store": {"postgres": "${NOT_A_URL}"}`, "", `store.postgres: after expansion, must be a PostgreSQL URL`},
		{"not a string", `"store": {"postgres": 5}`, "", `store.postgres`},
		{"not an object", `"store": "postgres://x"`, "", `store`},
		{"unknown field", `"store": {"postgress": "postgres://x"}`, "", `did you mean "postgres"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "{" + servers + "}"
			if tt.store != "" {
				src = "{" + tt.store + ", " + servers + "}"
			}
			cfg, err := Parse([]byte(src), testFile, env.opts())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Store.Postgres != tt.want {
				t.Errorf("Store.Postgres = %q, want %q", cfg.Store.Postgres, tt.want)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestStoreValidate: a hand-built Config's store is checked too.
func TestStoreValidate(t *testing.T) {
	cfg := &Config{Source: testFile, Store: Store{Postgres: "http://sb:s3cret@x/"}}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "store.postgres: must be a PostgreSQL URL") {
		t.Fatalf("Validate = %v, want a store.postgres error", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestStoreNeverPrintsPassword prints the store and the configuration
// every way a program might.
func TestStoreNeverPrintsPassword(t *testing.T) {
	cfg := mustParse(t, `{"store": {"postgres": "${DATABASE_URL}"}, "mcpServers": {"a": {"command": "x"}}}`,
		fakeEnv{"DATABASE_URL": "postgres://sb:s3cret@db.example/x?sslmode=require&password=s3cret"})
	var out []string
	for _, v := range []any{cfg.Store, &cfg.Store, cfg, *cfg} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
		var buf bytes.Buffer
		slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "v", v)
		out = append(out, buf.String())
	}
	for _, o := range out {
		if strings.Contains(o, "s3cret") {
			t.Errorf("printed the password: %s", o)
		}
	}
	if got, want := cfg.Store.String(), "postgres postgres://sb:xxxxx@db.example/x?password=xxxxx&sslmode=require"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := (Store{}).String(); got != "sqlite" {
		t.Errorf("zero Store String = %q, want sqlite", got)
	}
}

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"postgres://sb:s3cret@h:5432/db", "postgres://sb:xxxxx@h:5432/db"},
		{"postgres://sb@h/db", "postgres://sb@h/db"},
		{"postgres://h/db?password=s3cret", "postgres://h/db?password=xxxxx"},
		{"postgres://sb:s3cret@h:notaport/db", "[redacted: not a URL]"},
		{"host=h password=s3cret", "[redacted: not a URL]"},
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
