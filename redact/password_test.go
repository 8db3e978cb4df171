package redact

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// TestPasswordAssignment: a value assigned to a key named like a password
// or secret is redacted whatever its entropy (people choose passwords
// from words), in env files, flags, YAML, JSON and code, as written or
// inside a raw JSON line; code, types and placeholders are kept.
func TestPasswordAssignment(t *testing.T) {
	const p = "[REDACTED:password-assignment]"
	cases := []tc{
		{"password=hunter2", "password=" + p, 1},
		{`password: "Summer2024!"`, `password: "` + p + `"`, 1},
		{"DB_PASSWORD=CorrectHorseBatteryStaple", "DB_PASSWORD=" + p, 1},
		{"export PGPASSWORD=letmein\nnext line", "export PGPASSWORD=" + p + "\nnext line", 1},
		{"mysql --password=opensesame -h db", "mysql --password=" + p + " -h db", 1},
		{"password: hunter2\nuser: bob", "password: " + p + "\nuser: bob", 1},
		{"my password: hunter2", "my password: " + p, 1},
		{`{"password": "tr0ub4dor"}`, `{"password": "` + p + `"}`, 1},
		{`login(user="bob", password="hunter2")`, `login(user="bob", password="` + p + `")`, 1},
		{`Password: "correct horse",`, `Password: "correct horse",`, 0}, // spaces: a sentence more often than a password
		{`admin_passwd='qwerty12'`, `admin_passwd='` + p + `'`, 1},
		{"passphrase = 'swordfish'", "passphrase = '" + p + "'", 1},
		{`client_secret: "orange-fish-42"`, `client_secret: "` + p + `"`, 1},
		{"?user=bob&password=hunter22&x=1", "?user=bob&password=" + p + "&x=1", 1},
		// A password that holds a placeholder word beside anything else is
		// still a password.
		{"password=hunter2secret", "password=" + p, 1},
		{"DB_PASSWORD=MyPassword123", "DB_PASSWORD=" + p, 1},
		{`secret: "mysupersecret"`, `secret: "` + p + `"`, 1},
		{"passwd=Password1", "passwd=" + p, 1},
		// In a raw JSON line: escaped quotes and newlines.
		{`{"user":"password: \"Summer2024!\" ok"}`, `{"user":"password: \"` + p + `\" ok"}`, 1},
		{`{"user":"DB_PASSWORD=hunter2\nPORT=5432"}`, `{"user":"DB_PASSWORD=` + p + `\nPORT=5432"}`, 1},
	}
	for i, c := range cases {
		got, n := Redact(c.in)
		if got != c.want || n != c.n {
			t.Errorf("#%d:\n in   %q\n got  %q (%d)\n want %q (%d)", i, c.in, got, n, c.want, c.n)
		}
		if again, n2 := Redact(got); again != got || n2 != 0 {
			t.Errorf("#%d: not idempotent: %q -> %q", i, got, again)
		}
	}
	keep := []string{
		"password = request.form['password']",
		"password=password,",
		"login(user, password=pw)",
		"conn = connect(password=self.password)",
		"password: string;",
		"password: str",
		"password?: string",
		`"password": null`,
		"password: true",
		"Password: cfg.Password,",
		"the password: required",
		"Password: enter it below",
		"password_length=12",
		"password_hash=bcrypt(x)",
		`<input type="password" name="password">`,
		"if password == confirm:",
		"password := os.Getenv(\"PW\")",
		"password=$PASSWORD",
		`password: "<your password>"`,
		`password: "********"`,
		`"password": "changeme"`,
		"password=YOUR_PASSWORD_HERE",
		"secret: replace-with-your-secret",
		"password=example_password",
		"DB_PASSWORD=your-db-password-here",
		"the token: abc",
		"max_tokens=4096",
		"secret: false",
		"password-reset flow",
	}
	for _, s := range keep {
		if got, n := Redact(s); got != s || n != 0 {
			t.Errorf("false positive:\n in  %q\n got %q (%d)", s, got, n)
		}
	}
}

// TestTranscriptRedactions runs the rules over the real agent transcripts
// of ../shared (or $CONTINUITY_SHARED): each JSON line redacted is still
// valid JSON, and redacting again finds nothing more. What each rule
// redacts is logged, to keep an eye on false positives on real
// conversations (go test -v -run TestTranscriptRedactions ./redact).
func TestTranscriptRedactions(t *testing.T) {
	dir := shareddata.Require(t, "agent-transcripts")
	counts := map[string]int{}
	samples := map[string][]string{}
	var files, bytes, jsonLines int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(path, ".vscdb") || filepath.Base(path) == "README.md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		bytes += len(data)
		for i, line := range strings.Split(string(data), "\n") {
			if !json.Valid([]byte(line)) {
				continue
			}
			jsonLines++
			red, n := RedactJSON([]byte(line))
			if n == 0 {
				continue
			}
			if !json.Valid(red) {
				t.Errorf("%s:%d: redacted, no longer valid JSON: %.300s", path, i+1, red)
			}
			if again, n2 := RedactJSON(red); n2 != 0 {
				t.Errorf("%s:%d: redacted twice (%d more): %.300s", path, i+1, n2, again)
			}
		}
		out, n := RedactJSON(data)
		if n == 0 {
			return nil
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			for rest := line; ; {
				i := strings.Index(rest, marker)
				if i < 0 {
					break
				}
				j := strings.IndexByte(rest[i:], ']')
				name := rest[i+len(marker) : i+j]
				counts[name]++
				if len(samples[name]) < 5 {
					lo := max(0, i-60)
					samples[name] = append(samples[name], rest[lo:min(len(rest), i+j+20)])
				}
				rest = rest[i+j:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || jsonLines == 0 {
		t.Fatalf("%s holds %d transcript files, %d JSON lines: nothing was checked", dir, files, jsonLines)
	}
	var names []string
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d transcript files, %d KiB", files, bytes>>10)
	for _, n := range names {
		t.Logf("%-24s %d", n, counts[n])
		for _, s := range samples[n] {
			t.Logf("    …%s…", s)
		}
	}
}
