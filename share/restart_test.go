package share_test

import (
	"testing"

	"github.com/praxis-os/continuity/share/sharetest"
)

// TestServerRestart: a test's own server restarts (pg_ctl restart) and
// answers again, as the failure tests need.
func TestServerRestart(t *testing.T) {
	srv := sharetest.StartOwn(t)
	if !srv.CanRestart() {
		t.Skip("this PostgreSQL cannot be restarted by the tests")
	}
	srv.Restart(t)
	if n := sharetest.QueryInt(t, srv.URL, `SELECT 1`); n != 1 {
		t.Fatal(n)
	}
	srv.StopServer(t)
	srv.StartServer(t)
	if n := sharetest.QueryInt(t, srv.URL, `SELECT 2`); n != 2 {
		t.Fatal(n)
	}
}
