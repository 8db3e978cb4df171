// Package sharetest gives tests a real PostgreSQL (never a mock).
//
// CONTINUITY_TEST_PG, when set, is the URL of a superuser connection to a
// running server (CI: .ci/run starts Debian's PostgreSQL and sets it, with
// CONTINUITY_TEST_PGDATA and CONTINUITY_TEST_PGBIN so that tests can
// restart it). Otherwise the first test that asks starts its own server
// from /usr/lib/postgresql/*/bin in a temporary folder, on a loopback
// port, as the postgres user when running as root (PostgreSQL refuses to
// run as root). When neither works the test is skipped with the reason,
// unless CONTINUITY_REQUIRE_PG=1, which makes it fail.
package sharetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL.
type Server struct {
	// URL is a superuser connection to the postgres database.
	URL string
	// Host and Port are where it listens.
	Host string
	Port int
	data string // data folder, "" when it cannot be restarted
	bin  string // folder of pg_ctl
	own  bool   // started by this process
}

var (
	once    sync.Once
	shared  *Server
	initErr error
)

// Start returns the server, starting it on first use; it skips (or fails,
// with CONTINUITY_REQUIRE_PG=1) the test when there is none.
func Start(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() { shared, initErr = start() })
	if initErr != nil {
		msg := "no PostgreSQL for this test: " + initErr.Error() +
			" (set CONTINUITY_TEST_PG to a superuser URL, or install Debian's postgresql)"
		if os.Getenv("CONTINUITY_REQUIRE_PG") == "1" {
			tb.Fatal(msg + "; CONTINUITY_REQUIRE_PG=1 requires it")
		}
		tb.Skip(msg)
	}
	return shared
}

// Stop stops a server this process started; call it from TestMain.
func Stop() {
	if shared != nil && shared.own {
		_ = shared.ctl("stop", "-m", "immediate")
		_ = os.RemoveAll(filepath.Dir(shared.data))
	}
}

// Main runs the tests and stops the server they started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

func start() (*Server, error) {
	if u := os.Getenv("CONTINUITY_TEST_PG"); u != "" {
		pu, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("CONTINUITY_TEST_PG: %w", err)
		}
		port, _ := strconv.Atoi(pu.Port())
		s := &Server{URL: u, Host: pu.Hostname(), Port: port,
			data: os.Getenv("CONTINUITY_TEST_PGDATA"), bin: os.Getenv("CONTINUITY_TEST_PGBIN")}
		return s, s.ping()
	}
	return startLocal("")
}

// StartOwn starts a PostgreSQL of the test's own, stopped and removed
// when the test ends, for a test that stops or restarts the server: done
// to the shared one, it would cut the connections of the tests of other
// packages using it at the same time (go test runs packages in
// parallel; CI once lost two end-to-end tests to the share package's
// restart test). It skips (or fails, with CONTINUITY_REQUIRE_PG=1) the
// test where no PostgreSQL can be started here (CONTINUITY_TEST_PGBIN,
// else Debian's /usr/lib/postgresql/*/bin).
func StartOwn(tb testing.TB) *Server {
	tb.Helper()
	s, err := startLocal(os.Getenv("CONTINUITY_TEST_PGBIN"))
	if err != nil {
		msg := "no PostgreSQL of its own for this test, which stops and restarts it: " + err.Error()
		if os.Getenv("CONTINUITY_REQUIRE_PG") == "1" {
			tb.Fatal(msg + "; CONTINUITY_REQUIRE_PG=1 requires it")
		}
		tb.Skip(msg)
	}
	tb.Cleanup(func() {
		_ = s.ctl("stop", "-m", "immediate")
		_ = os.RemoveAll(filepath.Dir(s.data))
	})
	return s
}

// startLocal initialises and starts a server of this process's own with
// the pg_ctl of bin (a folder; "" for Debian's newest).
func startLocal(bin string) (*Server, error) {
	if bin == "" {
		bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(bins) == 0 {
			return nil, fmt.Errorf("no /usr/lib/postgresql/*/bin/pg_ctl")
		}
		sort.Strings(bins)
		bin = filepath.Dir(bins[len(bins)-1])
	}
	dir, err := os.MkdirTemp("", "continuity-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", data: filepath.Join(dir, "data"), bin: bin, own: true}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	pw := randomHex(12)
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(pw+"\n"), 0o644); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		_ = exec.Command("chown", "postgres", pwfile).Run()
	}
	if out, err := s.command(filepath.Join(bin, "initdb"), "-D", s.data, "-U", "postgres", "--pwfile", pwfile,
		"-A", "scram-sha-256", "--no-sync").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	s.URL = fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", pw, s.Port)
	if err := s.ctl("start", "-w", "-t", "60", "-l", filepath.Join(dir, "log"),
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", s.Port, dir)); err != nil {
		return nil, err
	}
	return s, s.ping()
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

func (s *Server) ctl(args ...string) error {
	if s.data == "" || s.bin == "" {
		return fmt.Errorf("this PostgreSQL cannot be restarted by the tests (set CONTINUITY_TEST_PGDATA and CONTINUITY_TEST_PGBIN)")
	}
	// The output goes to a file, not a pipe: the server pg_ctl starts
	// keeps the descriptors open, and reading a pipe to its end would
	// wait for the server to stop.
	f, err := os.CreateTemp("", "pg_ctl-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	_ = f.Chmod(0o666)
	cmd := s.command(filepath.Join(s.bin, "pg_ctl"), append([]string{"-D", s.data}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(f.Name())
		return fmt.Errorf("pg_ctl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// CanRestart reports whether Restart can work.
func (s *Server) CanRestart() bool { return s.data != "" && s.bin != "" }

// Restart restarts the server (pg_ctl restart, fast shutdown: every
// connection is cut).
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.ctl("restart", "-w", "-t", "120", "-m", "fast"); err != nil {
		s.stopNow(tb, err)
		s.StartServer(tb)
	}
}

// StopServer stops the server until StartServer (the database down).
func (s *Server) StopServer(tb testing.TB) {
	tb.Helper()
	if err := s.ctl("stop", "-w", "-t", "120", "-m", "fast"); err != nil {
		s.stopNow(tb, err)
	}
}

// stopNow stops the server as a crash would (immediate shutdown) after a
// fast shutdown failed with err: the tests need the server down, not a
// clean shutdown, and CI once saw a fast shutdown not end in 60 s on a
// loaded machine (every later test of the package then failed to
// connect). The server recovers at its next start.
func (s *Server) stopNow(tb testing.TB, err error) {
	tb.Helper()
	tb.Logf("a fast shutdown did not end (%v): stopping the server immediately", err)
	if err2 := s.ctl("stop", "-w", "-t", "60", "-m", "immediate"); err2 != nil && !strings.Contains(err2.Error(), "Is server running?") {
		tb.Fatalf("%v; then an immediate shutdown: %v", err, err2)
	}
}

// StartServer starts it again after StopServer.
func (s *Server) StartServer(tb testing.TB) {
	tb.Helper()
	// pg_ctl start does not reuse the options of the last start (restart
	// does): they are in postmaster.opts.
	opts, err := os.ReadFile(filepath.Join(s.data, "postmaster.opts"))
	if err != nil {
		tb.Fatal(err)
	}
	o := strings.TrimSpace(string(opts))
	if i := strings.Index(o, " "); i >= 0 {
		o = o[i+1:] // the binary
	}
	o = strings.Replace(o, `"-D" "`+s.data+`"`, "", 1)
	if err := s.ctl("start", "-w", "-t", "60", "-o", o); err != nil {
		tb.Fatal(err)
	}
}

func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return c.Close(ctx)
}

// Database creates a new database for one test (dropped at its end) and
// returns a superuser URL to it.
func (s *Server) Database(tb testing.TB) string {
	tb.Helper()
	name := "t_" + randomHex(6)
	s.Exec(tb, "CREATE DATABASE "+name)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, s.URL); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return s.WithDB(name)
}

// WithDB is the superuser URL to another database.
func (s *Server) WithDB(name string) string {
	u, _ := url.Parse(s.URL)
	u.Path = "/" + name
	return u.String()
}

// Exec runs SQL as the superuser on the postgres database.
func (s *Server) Exec(tb testing.TB, sql string, args ...any) {
	tb.Helper()
	ExecURL(tb, s.URL, sql, args...)
}

// ExecURL runs SQL on the connection of u.
func ExecURL(tb testing.TB, u, sql string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// UserURL is u with another user and password.
func UserURL(u, name, password string) string {
	pu, _ := url.Parse(u)
	pu.User = url.UserPassword(name, password)
	if password == "" {
		pu.User = url.User(name)
	}
	return pu.String()
}

// QueryInt runs a query returning one integer on the connection of u.
func QueryInt(tb testing.TB, u, sql string, args ...any) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	var n int64
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Strings runs a query returning text rows (every column of every row).
func Strings(tb testing.TB, u, sql string, args ...any) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		for _, v := range vals {
			if v != nil {
				out = append(out, fmt.Sprint(v))
			}
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// Name returns a unique lower-case name with the prefix (roles are shared
// by every database of a server).
func Name(prefix string) string { return prefix + "_" + randomHex(4) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
