//go:build ignore

// gen writes the labelled corpus: go run gen.go. It was run once, before
// any rule was tuned; tune.jsonl and unseen.jsonl are its two halves,
// drawn from the same templates by a shuffle with a fixed seed.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	mrand "math/rand/v2"
	"os"
	"strings"
)

type sample struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`             // what the secret is, or what the negative imitates
	Secret string `json:"secret,omitempty"` // the credential as it appears in text; "" for a negative
	Text   string `json:"text"`
}

var r = mrand.New(mrand.NewPCG(30, 3))

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b62    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	hexd   = "0123456789abcdef"
	b32    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64url = alnum + "-_"
	b64std = alnum + "+/"
	lower  = "abcdefghijklmnopqrstuvwxyz"
)

func pick(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func one[T any](xs ...T) T { return xs[r.IntN(len(xs))] }

func base62(n uint32) string {
	if n == 0 {
		return "000000"
	}
	var s []byte
	for n > 0 {
		s = append([]byte{b62[n%62]}, s...)
		n /= 62
	}
	for len(s) < 6 {
		s = append([]byte{'0'}, s...)
	}
	return string(s)
}

// checksummed is a GitHub or npm token: prefix, 30 random base62
// characters, then the CRC32 of those in base62, six digits.
func checksummed(prefix string) string {
	body := pick(alnum, 30)
	return prefix + body + base62(crc32.ChecksumIEEE([]byte(body)))
}

func jwt() string {
	alg := one("HS256", "RS256", "ES256", "EdDSA", "PS384")
	h := fmt.Sprintf(`{"alg":"%s","typ":"JWT"}`, alg)
	if r.IntN(3) == 0 {
		h = fmt.Sprintf(`{"kid":"%s","alg":"%s"}`, pick(hexd, 16), alg)
	}
	p := fmt.Sprintf(`{"sub":"%d","name":"%s","iat":%d,"exp":%d}`, r.IntN(1e6), one("ada", "bob", "svc-deploy", "jane.doe"), 1700000000+r.IntN(1e7), 1710000000+r.IntN(1e7))
	e := base64.RawURLEncoding.EncodeToString
	sig := make([]byte, one(32, 64, 256))
	rand.Read(sig)
	return e([]byte(h)) + "." + e([]byte(p)) + "." + e(sig)
}

func pem(kind string, escaped bool) string {
	der := make([]byte, one(600, 900, 1190))
	rand.Read(der)
	b := base64.StdEncoding.EncodeToString(der)
	nl := "\n"
	if escaped {
		nl = `\n`
	}
	var lines []string
	for len(b) > 64 {
		lines = append(lines, b[:64])
		b = b[64:]
	}
	lines = append(lines, b)
	return "-----BEGIN " + kind + "-----" + nl + strings.Join(lines, nl) + nl + "-----END " + kind + "-----"
}

func password() string {
	return one(
		pick(alnum, 16),
		one("Tr0ub4dor", "hunter2", "Summer2024", "qz", "N0rth")+one("!", "#", "-", "_", "")+pick(alnum, 6),
		pick(b64url, 24),
		one("correct-horse-battery-staple", "Vx9#mQ2", "s3cr3t-pr0d-db"),
	)
}

// secrets makes one credential of each kind, with its kind.
var makers = []struct {
	kind string
	make func() (secret string, ctx string)
}{
	{"github-classic", func() (string, string) {
		return checksummed(one("ghp_", "gho_", "ghu_", "ghs_", "ghr_")), "GITHUB_TOKEN"
	}},
	{"github-fine-grained", func() (string, string) {
		return "github_pat_" + pick(alnum, 22) + "_" + pick(alnum, 59), "GH_PAT"
	}},
	{"gitlab", func() (string, string) { return "glpat-" + pick(alnum+"-_", 20), "GITLAB_TOKEN" }},
	{"slack-bot", func() (string, string) {
		return one("xoxb-", "xoxp-", "xoxa-", "xoxr-") + fmt.Sprint(1e11+r.IntN(9e11)) + "-" + fmt.Sprint(1e12+r.IntN(9e12)) + "-" + pick(alnum, 24), "SLACK_BOT_TOKEN"
	}},
	{"slack-webhook", func() (string, string) {
		return "https://hooks.slack.com/services/T" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8) + "/B" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10) + "/" + pick(alnum, 24), "SLACK_WEBHOOK_URL"
	}},
	{"stripe", func() (string, string) {
		return one("sk_live_", "rk_live_") + pick(alnum, one(24, 99)), "STRIPE_SECRET_KEY"
	}},
	{"openai", func() (string, string) {
		return one(
			"sk-proj-"+pick(b64url, 156),
			"sk-"+pick(alnum, 20)+"T3BlbkFJ"+pick(alnum, 20),
			"sk-svcacct-"+pick(b64url, 120),
		), "OPENAI_API_KEY"
	}},
	{"anthropic", func() (string, string) { return "sk-ant-api03-" + pick(b64url, 93) + "AA", "ANTHROPIC_API_KEY" }},
	{"aws", func() (string, string) {
		// the secret access key is the credential; the key ID is its name
		return pick(b64std, 40), "AWS"
	}},
	{"google-api", func() (string, string) { return "AIza" + pick(b64url, 35), "GOOGLE_API_KEY" }},
	{"npm", func() (string, string) { return checksummed("npm_"), "NPM_TOKEN" }},
	{"pypi", func() (string, string) { return "pypi-AgEIcHlwaS5vcmc" + pick(b64url, 150), "PYPI_TOKEN" }},
	{"twilio", func() (string, string) { return "SK" + pick(hexd, 32), "TWILIO_API_KEY" }},
	{"sendgrid", func() (string, string) { return "SG." + pick(b64url, 22) + "." + pick(b64url, 43), "SENDGRID_API_KEY" }},
	{"huggingface", func() (string, string) { return "hf_" + pick(alnum[:52], 34), "HF_TOKEN" }},
	{"private-key", func() (string, string) {
		return pem(one("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"), false), "KEY"
	}},
	{"private-key-json", func() (string, string) { return pem("PRIVATE KEY", true), "private_key" }},
	{"jwt", func() (string, string) { return jwt(), "Authorization" }},
	{"url-password", func() (string, string) {
		return password(), one("postgresql", "postgres", "mysql", "mongodb+srv", "redis", "amqp", "https")
	}},
}

var hosts = []string{"db.internal", "10.0.3.17:5432", "prod-db.cluster-c9akciq32.eu-west-1.rds.amazonaws.com:5432", "cache-01:6379", "mq.acme.io:5672", "cluster0.ab1cd.mongodb.net"}

// surround puts a secret in realistic text.
func surround(kind, s, ctx string) string {
	user := one("app", "admin", "svc_reporting", "deploy", "root")
	if kind == "url-password" {
		url := ctx + "://" + user + ":" + s + "@" + one(hosts...) + one("/app", "/orders?sslmode=require", "", "/0", "/vhost")
		return one(
			"DATABASE_URL="+url+"\nLOG_LEVEL=info\n",
			`{"datasource": {"url": "`+url+`", "pool": 10}}`,
			"2026-02-11 09:14:55,120 ERROR sqlalchemy.pool: could not connect to "+url+": connection refused",
			"  File \"/srv/app/db.py\", line 41, in connect\n    engine = create_engine(\""+url+"\")\nOperationalError: timeout expired",
			"| id | name | dsn |\n|----|------|-----|\n| 4 | reporting | "+url+" |",
			"Row 1: {\"service\": \"billing\", \"conn\": \""+url+"\"}",
		)
	}
	if kind == "aws" {
		id := one("AKIA", "ASIA") + pick(b32, 16)
		return one(
			"[default]\naws_access_key_id = "+id+"\naws_secret_access_key = "+s+"\nregion = eu-west-1\n",
			`{"AccessKeyId": "`+id+`", "SecretAccessKey": "`+s+`", "Expiration": "2026-05-01T12:00:00Z"}`,
			"export AWS_ACCESS_KEY_ID="+id+"\nexport AWS_SECRET_ACCESS_KEY="+s+"\n",
			"Found credentials in issue #4411 comment: key "+id+" secret "+s,
		)
	}
	if strings.HasPrefix(kind, "private-key") {
		if kind == "private-key-json" {
			return `{"type": "service_account", "project_id": "acme-prod", "private_key_id": "` + pick(hexd, 40) + `", "private_key": "` + s + `\n", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}`
		}
		return one(
			"$ cat ~/.ssh/id_deploy\n"+s+"\n$ ",
			"File: config/tls/server.key (1.7 KB)\n\n"+s+"\n",
			"Contents of secret/prod/tls:\n  key: |\n"+indent(s, "    ")+"\n",
		)
	}
	return one(
		"2026-03-04T10:22:01.443Z INFO  auth  using token "+s+" for org acme (scopes: repo, workflow)",
		`{"name": "deploy", "env": {"`+ctx+`": "`+s+`", "LOG_LEVEL": "debug"}}`,
		ctx+"="+s+"\nDEBUG=false\nPORT=8080\n",
		"Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n    client = Client(api_key=\""+s+"\")\nValueError: unknown region 'eu-north-9'",
		"Found 1 match in .github/workflows/ci.yml:\n14:          token: "+s+"\n",
		"<@U024BE7LH> here is the key for staging: "+s+" — please rotate it after the demo",
		" id | provider | value\n----+----------+------------------\n  3 | "+strings.ToLower(ctx)+" | "+s+"\n(1 row)",
		"curl -sS -H \"Authorization: Bearer "+s+"\" https://api.acme.dev/v1/me",
		"Issue #"+fmt.Sprint(100+r.IntN(9000))+": Build fails on main\n\nI pasted my config by mistake:\n```\n"+strings.ToLower(ctx)+": "+s+"\n```\nsorry!",
		"headers: {'Authorization': 'token "+s+"', 'Accept': 'application/json'}",
		`[{"type":"text","text":"secret value: `+s+`"}]`,
		"    at Object.<anonymous> (/app/index.js:3:18) with options {\"apiKey\":\""+s+"\",\"retries\":3}",
	)
}

func indent(s, p string) string { return p + strings.ReplaceAll(s, "\n", "\n"+p) }

// negatives: hard cases that are not credentials.
var negatives = []struct {
	kind string
	make func() string
}{
	{"sha1-commit", func() string {
		c := pick(hexd, 40)
		return one("commit "+c+"\nAuthor: Ada <ada@example.com>\nDate:   Tue Mar 3 10:00:00 2026\n\n    fix: retry on 502\n",
			"https://github.com/acme/api/commit/"+c, `{"sha": "`+c+`", "parents": [{"sha": "`+pick(hexd, 40)+`"}]}`)
	}},
	{"sha256", func() string {
		h := pick(hexd, 64)
		return one("sha256:"+h, h+"  dist/switchboard_linux_amd64.tar.gz", `"digest": "sha256:`+h+`"`, "ETag: \""+h+"\"")
	}},
	{"uuid", func() string {
		u := pick(hexd, 8) + "-" + pick(hexd, 4) + "-4" + pick(hexd, 3) + "-a" + pick(hexd, 3) + "-" + pick(hexd, 12)
		return one(`{"id": "`+u+`", "status": "active"}`, "request_id="+u+" took 231ms", "X-Request-Id: "+u)
	}},
	{"base64-image", func() string {
		b := make([]byte, 600+r.IntN(900))
		rand.Read(b)
		return "data:image/png;base64,iVBORw0KGgo" + base64.StdEncoding.EncodeToString(b)
	}},
	{"integrity", func() string {
		b := make([]byte, 64)
		rand.Read(b)
		return `"integrity": "sha512-` + base64.StdEncoding.EncodeToString(b) + `"`
	}},
	{"random-id", func() string {
		return one("req_"+pick(alnum, 14), "cus_"+pick(alnum, 14), "ch_3"+pick(alnum, 23), "pi_3"+pick(alnum, 23), pick("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26), "evt_"+pick(alnum, 24), pick(b64url, 21)) + " created at 2026-01-05T11:20:00Z"
	}},
	{"stripe-publishable", func() string { return `<script>Stripe("pk_live_` + pick(alnum, 99) + `")</script>` }},
	{"twilio-sid", func() string { return "Account SID: AC" + pick(hexd, 32) }},
	{"slack-ids", func() string {
		return fmt.Sprintf(`{"channel": "C%s", "ts": "%d.%06d", "user": "U%s", "team": "T%s"}`, pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10), 1700000000+r.IntN(1e7), r.IntN(1e6), pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10), pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8))
	}},
	{"doc-placeholder", func() string {
		return one(
			"Set OPENAI_API_KEY=sk-... in your environment, then run `npm start`.",
			"export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			"Your key looks like `sk-ant-api03-...` and is shown once.",
			"Use a token such as ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX with the repo scope.",
			"STRIPE_SECRET_KEY=sk_live_your_key_here",
			"Create a key at https://platform.openai.com/api-keys (it starts with sk-proj-).",
			"Authorization: Bearer <YOUR_TOKEN>",
			"SLACK_BOT_TOKEN=xoxb-your-bot-token",
			"GITLAB_TOKEN=glpat-xxxxxxxxxxxxxxxxxxxx",
			"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
			"npm config set //registry.npmjs.org/:_authToken=${NPM_TOKEN}",
			"HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			"-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
			"The JWT has three parts: header.payload.signature, e.g. eyJhbGciOi...",
		)
	}},
	{"redacted", func() string {
		return one("token: ghp_****************************", "GITHUB_TOKEN=[redacted: github-token]", "api_key=sk-************************abcd", "password: ********", "DATABASE_URL=postgres://app:****@db.internal/app", "Authorization: Bearer [REDACTED]", "xoxb-**********-**********-************************")
	}},
	{"url-no-password", func() string {
		return one(
			"DATABASE_URL=postgres://app@db.internal:5432/app",
			"DATABASE_URL=postgresql://app:${DB_PASSWORD}@db.internal/app",
			"mongodb://<username>:<password>@cluster0.example.mongodb.net/test",
			"redis://localhost:6379/0",
			"https://"+one("ada", "git")+"@github.com/acme/api.git",
			"postgres://user:password@localhost:5432/mydb",
			"mysql://root:$MYSQL_ROOT_PASSWORD@127.0.0.1:3306/app",
			"Visit https://example.com:8443/path?x=1 for details",
			"amqp://guest:guest@localhost:5672/",
			"jdbc:postgresql://db:5432/app?user=app&password=",
		)
	}},
	{"public-key", func() string {
		b := make([]byte, 51)
		rand.Read(b)
		return one("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"+base64.StdEncoding.EncodeToString(b)[:43]+" ada@laptop",
			pem("PUBLIC KEY", false), pem("CERTIFICATE", false))
	}},
	{"not-jwt", func() string {
		return one("eyJ"+pick(b64url, 30)+"."+pick(b64url, 20)+"."+pick(b64url, 30),
			"cdn.jsdelivr.net/npm/lodash@4.17.21/lodash.min.js",
			"version 1."+fmt.Sprint(r.IntN(40))+"."+fmt.Sprint(r.IntN(9)),
			"state=eyJyZXR1cm4iOiIvIn0 (base64 of {\"return\":\"/\"})")
	}},
	{"word-with-sk", func() string {
		return one("risk-assessment-2024-q3-final-report-"+pick(hexd, 8)+".pdf", "desk-booking-service-"+pick(lower, 12), "disk-usage-monitor-"+pick(hexd, 24), "task-runner-"+pick(alnum, 32),
			"class=\"mask-image-"+pick(lower, 20)+"\"", "ask-me-anything-"+pick(alnum, 40))
	}},
	{"hex-blob", func() string {
		return one("nonce="+pick(hexd, 32), "salt: "+pick(hexd, 32)+"\nrounds: 12", "md5("+one("a.txt", "b.bin")+") = "+pick(hexd, 32), "SKU"+pick(hexd, 31)+" in stock")
	}},
	{"random-base64", func() string {
		return one("Content-MD5: "+pick(b64std, 22)+"==", "cursor: "+pick(b64url, 48), `"nextPageToken": "`+pick(b64url, 60)+`"`, "csrf_token="+pick(b64url, 43))
	}},
	{"bcrypt-hash", func() string {
		return "$2b$12$" + pick("./"+alnum, 53) + "  # stored hash, not the password"
	}},
	{"go-sum", func() string {
		return "github.com/" + one("spf13/cobra", "google/uuid") + " v1." + fmt.Sprint(r.IntN(9)) + ".0 h1:" + pick(b64std, 43) + "="
	}},
	{"aws-ids", func() string {
		return one("arn:aws:iam::"+pick("0123456789", 12)+":role/deploy", "i-0"+pick(hexd, 16), "AROA"+pick(b32, 16)+" is the role's unique ID", "ami-"+pick(hexd, 17))
	}},
}

func main() {
	var pos, neg []sample
	for round := 0; round < 13; round++ {
		for _, m := range makers {
			s, ctx := m.make()
			pos = append(pos, sample{Kind: m.kind, Secret: s, Text: surround(m.kind, s, ctx)})
		}
	}
	for round := 0; round < 13; round++ {
		for _, n := range negatives {
			neg = append(neg, sample{Kind: n.kind, Text: n.make()})
		}
	}
	all := append(pos, neg...)
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	parts := map[string][]sample{}
	for i, s := range all {
		part := "tune"
		if i%2 == 1 {
			part = "unseen"
		}
		s.ID = fmt.Sprintf("%s-%03d", part, len(parts[part]))
		parts[part] = append(parts[part], s)
	}
	for part, ss := range parts {
		f, err := os.Create(part + ".jsonl")
		if err != nil {
			panic(err)
		}
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		for _, s := range ss {
			if err := enc.Encode(s); err != nil {
				panic(err)
			}
		}
		f.Close()
	}
}
