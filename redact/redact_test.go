package redact

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The fake secrets below are assembled at run time (prefix split, random
// body from a fixed seed) so that this file holds nothing a secret scanner
// would take for a live key.

var rng = rand.New(rand.NewPCG(1, 2))

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperD = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b64    = alnum + "+/"
	b64url = alnum + "-_"
)

// rnd returns n random bytes of alphabet, with at least one upper-case
// letter, one lower-case letter and one digit when the alphabet has them.
func rnd(alphabet string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		c := classify(string(b))
		if (c.upper > 0 || !strings.ContainsAny(alphabet, "ABC")) &&
			(c.lower > 0 || !strings.ContainsAny(alphabet, "abc")) &&
			(c.digit > 0 || !strings.ContainsAny(alphabet, "012")) {
			return string(b)
		}
	}
}

// tc is one redaction case: in becomes want (R(name) stands for the
// replacement), with n secrets.
type tc struct {
	in, want string
	n        int
}

func R(name string) string { return Replacement(name) }

func TestRules(t *testing.T) {
	ghp := "gh" + "p_" + rnd(alnum, 36)
	ghs := "gh" + "s_" + rnd(alnum, 36)
	gho := "gh" + "o_" + rnd(alnum, 36)
	ghu := "gh" + "u_" + rnd(alnum, 36)
	ghr := "gh" + "r_" + rnd(alnum, 36)
	pat := "github" + "_pat_" + rnd(alnum, 22) + "_" + rnd(alnum, 59)
	glpat := "gl" + "pat-" + rnd(b64url, 20)
	xoxb := "xo" + "xb-" + "1234567890-1234567890123-" + rnd(alnum, 24)
	xapp := "xa" + "pp-1-A0" + rnd(upperD, 10) + "-1234567890123-" + strings.ToLower(rnd(alnum, 64))
	hook := rnd(upperD, 9) + "/" + rnd(upperD, 11) + "/" + rnd(alnum, 24)
	stripe := "sk" + "_live_" + rnd(alnum, 24)
	rstripe := "rk" + "_live_" + rnd(alnum, 99)
	openai := "sk" + "-" + rnd(alnum, 48)
	proj := "sk" + "-proj-" + rnd(b64url, 120)
	ant := "sk" + "-ant-api03-" + rnd(b64url, 93) + "AA"
	gkey := "AI" + "za" + rnd(b64url, 35)
	akia := "AK" + "IA" + rnd(upperD, 16)
	asia := "AS" + "IA" + rnd(upperD, 16)
	awsSecret := rnd(b64, 40)
	jwt := "ey" + "J" + rnd(b64url, 30) + ".ey" + "J" + rnd(b64url, 60) + "." + rnd(b64url, 43)
	npm := "np" + "m_" + rnd(alnum, 36)
	pypi := "py" + "pi-AgEIcHlwaS5vcmc" + rnd(b64url, 60)
	hf := "h" + "f_" + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34)
	sg := "S" + "G." + rnd(b64url, 22) + "." + rnd(b64url, 43)
	pw := rnd(alnum, 14)
	bearer := rnd(b64url, 40)
	generic := rnd(alnum, 32)
	hex := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	pemBody := rnd(b64, 64) + "\n" + rnd(b64, 64) + "\n" + rnd(b64, 20) + "=="
	begin, end := "-----BEGIN RSA PRIV"+"ATE KEY-----", "-----END RSA PRIV"+"ATE KEY-----"
	begin8, end8 := "-----BEGIN PRIV"+"ATE KEY-----", "-----END PRIV"+"ATE KEY-----"
	beginSSH, endSSH := "-----BEGIN OPENSSH PRIV"+"ATE KEY-----", "-----END OPENSSH PRIV"+"ATE KEY-----"
	pemJSON := strings.ReplaceAll(begin+"\n"+pemBody+"\n"+end, "\n", `\n`)

	rules := map[string][]tc{
		"private-key": {
			{"key:\n" + begin + "\n" + pemBody + "\n" + end + "\nthanks", "key:\n" + R("private-key") + "\nthanks", 1},
			{begin8 + "\n" + pemBody + "\n" + end8, R("private-key"), 1},
			{"x " + beginSSH + "\n" + pemBody + "\n" + endSSH + " y", "x " + R("private-key") + " y", 1},
			{`{"user":"` + pemJSON + `","ai":"ok"}`, `{"user":"` + R("private-key") + `","ai":"ok"}`, 1},
			{"truncated " + begin + "\n" + pemBody + "\n\nand then some prose.", "truncated " + R("private-key") + "\n\nand then some prose.", 1},
		},
		"jwt": {
			{"token is " + jwt + ", expires soon", "token is " + R("jwt") + ", expires soon", 1},
			{`{"ai":"see\n` + jwt + `"}`, `{"ai":"see\n` + R("jwt") + `"}`, 1},
		},
		"anthropic-key": {
			{"ANTHROPIC_API_KEY=" + ant + " claude", "ANTHROPIC_API_KEY=" + R("anthropic-key") + " claude", 1},
		},
		"openai-key": {
			{"use " + openai + " here", "use " + R("openai-key") + " here", 1},
			{"export OPENAI_API_KEY=" + proj, "export OPENAI_API_KEY=" + R("openai-key"), 1},
		},
		"github-token": {
			{"git clone with " + ghp + " please", "git clone with " + R("github-token") + " please", 1},
			{ghs + " " + gho + " " + ghu + " " + ghr, strings.Repeat(R("github-token")+" ", 3) + R("github-token"), 4},
			{"GH_TOKEN=" + pat, "GH_TOKEN=" + R("github-token"), 1},
			{"https://x-access-token:" + ghs + "@github.com/o/r.git", "https://x-access-token:" + R("github-token") + "@github.com/o/r.git", 1},
		},
		"gitlab-token": {
			{"PRIVATE-TOKEN: " + glpat, "PRIVATE-TOKEN: " + R("gitlab-token"), 1},
		},
		"slack-token": {
			{"bot " + xoxb + ".", "bot " + R("slack-token") + ".", 1},
			{"app " + xapp, "app " + R("slack-token"), 1},
		},
		"slack-webhook": {
			{"post to https://hooks.slack.com/services/" + hook + " now", "post to https://hooks.slack.com/services/" + R("slack-webhook") + " now", 1},
		},
		"stripe-key": {
			{"stripe.api_key = '" + stripe + "'", "stripe.api_key = '" + R("stripe-key") + "'", 1},
			{rstripe, R("stripe-key"), 1},
		},
		"google-api-key": {
			{"?key=" + gkey + "&q=1", "?key=" + R("google-api-key") + "&q=1", 1},
		},
		"aws-access-key-id": {
			{"aws_access_key_id = " + akia + "\n", "aws_access_key_id = " + R("aws-access-key-id") + "\n", 1},
			{`"AccessKeyId": "` + asia + `"`, `"AccessKeyId": "` + R("aws-access-key-id") + `"`, 1},
		},
		"aws-secret-access-key": {
			{"aws_secret_access_key = " + awsSecret + "\nregion", "aws_secret_access_key = " + R("aws-secret-access-key") + "\nregion", 1},
			{"export AWS_SECRET_ACCESS_KEY=" + awsSecret, "export AWS_SECRET_ACCESS_KEY=" + R("aws-secret-access-key"), 1},
			{`"SecretAccessKey": "` + awsSecret + `",`, `"SecretAccessKey": "` + R("aws-secret-access-key") + `",`, 1},
			{`{"user":"\"SecretAccessKey\": \"` + awsSecret + `\""}`, `{"user":"\"SecretAccessKey\": \"` + R("aws-secret-access-key") + `\""}`, 1},
		},
		"npm-token": {
			{"//registry.npmjs.org/:_authToken=" + npm, "//registry.npmjs.org/:_authToken=" + R("npm-token"), 1},
		},
		"pypi-token": {
			{"password = " + pypi, "password = " + R("pypi-token"), 1},
		},
		"huggingface-token": {
			{"HF_TOKEN=" + hf, "HF_TOKEN=" + R("huggingface-token"), 1},
		},
		"sendgrid-key": {
			{"key " + sg, "key " + R("sendgrid-key"), 1},
		},
		"url-password": {
			{"DATABASE_URL=postgres://app:" + pw + "@db.internal:5432/app", "DATABASE_URL=postgres://app:" + R("url-password") + "@db.internal:5432/app", 1},
			{"redis://:" + pw + "@localhost:6379", "redis://:" + R("url-password") + "@localhost:6379", 1},
			{`{"ai":"try https://bob:` + pw + `@example.org/x"}`, `{"ai":"try https://bob:` + R("url-password") + `@example.org/x"}`, 1},
			// A password holding a placeholder word is still one.
			{"postgres://app:" + "my" + "secret" + "pw@db/app", "postgres://app:" + R("url-password") + "@db/app", 1},
		},
		"authorization-header": {
			{"curl -H 'Authorization: Bearer " + bearer + "' https://api", "curl -H 'Authorization: Bearer " + R("authorization-header") + "' https://api", 1},
			{`headers = {"Authorization": "token ` + generic + `"}`, `headers = {"Authorization": "token ` + R("authorization-header") + `"}`, 1},
			{"authorization: basic dXNlcjpwYXNzd29yZA==", "authorization: basic " + R("authorization-header"), 1},
			{`-H "Authorization: Bearer ` + jwt + `"`, `-H "Authorization: Bearer ` + R("jwt") + `"`, 1},
		},
		"bearer-token": {
			{"the bearer " + bearer + " expired", "the bearer " + R("bearer-token") + " expired", 1},
		},
		"password-assignment": {
			{"DB_PASSWORD=Correct" + "HorseBatteryStaple", "DB_PASSWORD=" + R("password-assignment"), 1},
		},
		"secret-assignment": {
			{"DB_PASSWORD=" + pw + "x9\nnext", "DB_PASSWORD=" + R("secret-assignment") + "\nnext", 1},
			{`password = "` + pw + `"`, `password = "` + R("secret-assignment") + `"`, 1},
			{`{"client_secret": "` + generic + `"}`, `{"client_secret": "` + R("secret-assignment") + `"}`, 1},
			{`api_key: ` + generic, `api_key: ` + R("secret-assignment"), 1},
			{`const apiKey = '` + hex + `';`, `const apiKey = '` + R("secret-assignment") + `';`, 1},
			{"--token=" + generic + " --verbose", "--token=" + R("secret-assignment") + " --verbose", 1},
			{"GET /x?access_token=" + generic + "&page=2", "GET /x?access_token=" + R("secret-assignment") + "&page=2", 1},
			{`accessToken: "` + generic + `"`, `accessToken: "` + R("secret-assignment") + `"`, 1},
			{`{"ai":"set \"secret_key\": \"` + generic + `\" there"}`, `{"ai":"set \"secret_key\": \"` + R("secret-assignment") + `\" there"}`, 1},
		},
	}
	for _, name := range Names() {
		if len(rules[name]) == 0 {
			t.Errorf("rule %s has no test case", name)
		}
	}
	for name, cases := range rules {
		if !slices.Contains(Names(), name) {
			t.Errorf("test cases for unknown rule %s", name)
		}
		for i, c := range cases {
			got, n := Redact(c.in)
			if got != c.want || n != c.n {
				t.Errorf("%s #%d:\n in   %q\n got  %q (%d)\n want %q (%d)", name, i, c.in, got, n, c.want, c.n)
			}
			if again, n2 := Redact(got); again != got || n2 != 0 {
				t.Errorf("%s #%d: not idempotent: %q -> %q (%d)", name, i, got, again, n2)
			}
			gb, nb := RedactBytes([]byte(c.in))
			if string(gb) != got || nb != n {
				t.Errorf("%s #%d: RedactBytes %q (%d) differs from Redact", name, i, gb, nb)
			}
		}
	}
}

// TestNoFalsePositives lists texts that look a little like secrets and
// must be kept as they are.
func TestNoFalsePositives(t *testing.T) {
	keep := []string{
		"",
		"plain prose about tokens, secrets and passwords, nothing else",
		"token := tokenizer.New(cfg)",
		"password = getPassword(user)",
		"secret = os.Getenv(\"SECRET_KEY_V2\")",
		"token=base64.b64encode(data)",
		`tokenizer: "bert-base-uncased-v2"`,
		`model_token_limit: "128000"`,
		`password: "${DB_PASSWORD}"`,
		"password=$DB_PASSWORD",
		`api_key: "YOUR_API_KEY_HERE"`,
		`api_key: "xxxxxxxxxxxxxxxxxxxxxxxx"`,
		`"token": "<your token>"`,
		`secret_key_path = "/etc/app/secrets/key1.pem"`,
		"Authorization: Bearer <key>",
		"Authorization: Bearer $TOKEN",
		`"Authorization: Bearer " + apiKey`,
		"Authorization: Bearer YOUR_TOKEN",
		"the task-management-system-configuration-helper module",
		"sk-learn and sk-" + strings.Repeat("a", 40),
		"see https://user@example.com/path and http://localhost:8080/x",
		"postgres://user:password@localhost/db",
		"mysql://root:${MYSQL_PASSWORD}@db/app",
		"ASIA and AKIA are prefixes; Asia is a continent",
		"commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
		"uuid 550e8400-e29b-41d4-a716-446655440000",
		"eyJhbGciOi is the start of many JWT headers",
		"hf_hub_download(repo_id=\"x\")",
		"npm_config_cache=/tmp/npm",
		"bearer token auth is described in RFC 6750",
		"tokens_used=123456789012345678",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
		"[REDACTED:github-token] stays as it is",
		"grant_type=x&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&scope=y",
		"PrivateKey:  testRSA2048PrivateKey,",
		"f(token=tokenV2Handler2024, retries=3)",
		`"private_key_id": "` + fakeHex + `"`,
		`{"ai":"the \"token_type\": \"` + fakeHex + `\" field"}`,
	}
	for _, s := range keep {
		if got, n := Redact(s); got != s || n != 0 {
			t.Errorf("false positive:\n in  %q\n got %q (%d)", s, got, n)
		}
	}
}

func TestRedactorConfig(t *testing.T) {
	r, err := New(Rule{Name: "ticket", Regexp: `TKT-(?P<secret>[0-9]{6})`, Keywords: []string{"TKT-"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, n := r.Redact("see TKT-123456 and TKT-12"); got != "see TKT-[REDACTED:ticket] and TKT-12" || n != 1 {
		t.Errorf("custom rule: %q %d", got, n)
	}
	if !slices.Equal(r.Names(), []string{"ticket"}) {
		t.Errorf("Names = %v", r.Names())
	}
	for _, bad := range []Rule{
		{Regexp: "x"},
		{Name: "a", Regexp: "("},
		{Name: "a", Regexp: "x", Keywords: []string{""}},
		{Name: "a", Regexp: "x", Keywords: []string{"X"}, Fold: true},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v): no error", bad)
		}
	}
	var off *Redactor
	if got, n := off.Redact("gh" + "p_" + rnd(alnum, 36)); n != 0 || !strings.HasPrefix(got, "ghp_") {
		t.Errorf("nil Redactor redacted: %q", got)
	}
	t.Setenv(EnvVar, "off")
	if FromEnv() != nil {
		t.Error("FromEnv with redaction off is not nil")
	}
	t.Setenv(EnvVar, "")
	if FromEnv() != Default() {
		t.Error("FromEnv by default is not Default()")
	}
	b := []byte("no secret here")
	if out, n := RedactBytes(b); n != 0 || &out[0] != &b[0] {
		t.Error("RedactBytes without secrets did not return its input")
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if len(names) < 15 {
		t.Fatalf("only %d rules: %v", len(names), names)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("name %s listed twice", n)
		}
		seen[n] = true
	}
	for _, r := range DefaultRules() {
		if r.Comment == "" {
			t.Errorf("rule %s has no comment", r.Name)
		}
	}
}

// exchange2K is a 2 KB exchange without secrets, in the words of a coding
// session: code, paths, URLs, hashes, and the words token, secret and
// password, so that the slow paths of several rules are exercised.
var exchange2K = func() string {
	s := `{"type":"exchange","session_id":"s-2026-11-01","id":"e-42","timestamp":"2026-11-01T10:00:00Z",` +
		`"user":"The tokenizer splits on whitespace before counting tokens; can you check why the token count is off by one in search/rank.go? ` +
		`Also the password prompt in the login form should not echo, and the secret store path comes from the config.",` +
		`"ai":"I looked at search/rank.go: the loop in func rank(ctx context.Context, q string) ([]Hit, error) uses i <= len(tokens) instead of i < len(tokens), ` +
		`so the last token is counted twice. Fixed in commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b. See https://pkg.go.dev/strings#Fields and ` +
		`http://localhost:8080/debug/vars for the counters. The password prompt now uses term.ReadPassword(int(os.Stdin.Fd())). ` +
		`The secret store path is read with cfg.SecretPath; nothing is logged. Bearer auth is unchanged. Tests: go test -tags sqlite_fts5 ./search/...",` +
		`"files":["search/rank.go","search/rank_test.go","cmd/login/main.go"]}`
	for len(s) < 2048 {
		s += " The session continues with more ordinary text about code, offsets, generations and the daemon lock."
	}
	return s[:2048]
}()

func TestBenchTextHasNoSecret(t *testing.T) {
	if _, n := Redact(exchange2K); n != 0 {
		t.Fatalf("the benchmark text has %d redactions", n)
	}
}

func BenchmarkRedact(b *testing.B) {
	b.SetBytes(int64(len(exchange2K)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(exchange2K)
	}
}

func BenchmarkRedactProse(b *testing.B) {
	// No keyword of any rule but "://": the pure fast path.
	s := strings.Repeat("An ordinary sentence about the index, the watcher and the daemon. ", 32)[:2048]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(s)
	}
}

func BenchmarkRedactWithSecrets(b *testing.B) {
	s := exchange2K[:1800] + " token=" + rnd(alnum, 32) + " gh" + "p_" + rnd(alnum, 36)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(s)
	}
}

// fakeHex is 40 hex digits (a key id, a commit hash).
const fakeHex = "3f2c9a1b7e4d6c8f0a5b2e9d1c7f3a6b8e0d4c2f"

// TestRawLineStaysValid redacts a raw log line (JSON, with the text's
// newlines and quotes escaped) and checks that it is still valid JSON and
// holds the same as the redacted decoded fields.
func TestRawLineStaysValid(t *testing.T) {
	pem := "-----BEGIN EC PRIV" + "ATE KEY-----\n" + rnd(b64, 64) + "\n" + rnd(b64, 40) + "\n-----END EC PRIV" + "ATE KEY-----"
	user := "deploy with GH_TOKEN=" + "gh" + "p_" + rnd(alnum, 36) + " and\n" + pem +
		"\nthen curl -H \"Authorization: Bearer " + rnd(b64url, 40) + "\" https://ci:" + rnd(alnum, 16) + "@ci.example.org/run"
	ai := "Set \"client_secret\": \"" + rnd(alnum, 32) + "\"\n\tand AWS_SECRET_ACCESS_KEY=" + rnd(b64, 40) +
		"\nalso token " + "ey" + "J" + rnd(b64url, 20) + ".ey" + "J" + rnd(b64url, 40) + "." + rnd(b64url, 43)
	raw, err := json.Marshal(map[string]string{"type": "exchange", "user": user, "ai": ai})
	if err != nil {
		t.Fatal(err)
	}
	out, n := RedactBytes(raw)
	if !json.Valid(out) {
		t.Fatalf("redacted line is not valid JSON:\n%s", out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	wantUser, nu := Redact(user)
	wantAI, na := Redact(ai)
	if got["user"] != wantUser || got["ai"] != wantAI || n != nu+na {
		t.Errorf("raw and decoded redaction differ (%d vs %d+%d):\nraw  user %q\ntext user %q\nraw  ai %q\ntext ai %q",
			n, nu, na, got["user"], wantUser, got["ai"], wantAI)
	}
	if nu != 4 || na != 3 {
		t.Errorf("redacted %d secrets in user, %d in ai; want 4 and 3:\n%s\n%s", nu, na, wantUser, wantAI)
	}
}
