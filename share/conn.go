package share

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/praxis-os/continuity/follow"
)

// pgConn is one connection, opened on first use and again after a
// failure: a daemon keeps working locally while the database is down.
type pgConn struct {
	url string

	mu   sync.Mutex
	c    *pgx.Conn
	cfg  *pgx.ConnConfig
	perr error // the URL's parse error
}

func newPGConn(url string) *pgConn {
	p := &pgConn{url: url}
	p.cfg, p.perr = pgx.ParseConfig(url)
	if p.perr != nil {
		p.perr = fmt.Errorf("share: the database URL is not valid: %s", redactURLError(p.perr, url))
	}
	return p
}

// get returns the open connection, or opens one.
func (p *pgConn) get(ctx context.Context) (*pgx.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perr != nil {
		return nil, p.perr
	}
	if p.c != nil && !p.c.IsClosed() {
		return p.c, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, p.cfg.Copy())
	if err != nil {
		return nil, describe(p.cfg, "connect", err)
	}
	p.c = c
	return c, nil
}

// fail describes err and drops the connection, so that the next step
// opens a new one (a transaction cut by a restart leaves it unusable).
func (p *pgConn) fail(what string, err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		p.c.Close(context.Background())
		p.c = nil
	}
	return describe(p.cfg, what, err)
}

func (p *pgConn) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		p.c.Close(context.Background())
		p.c = nil
	}
}

func (p *pgConn) server() string {
	if p.cfg == nil {
		return "PostgreSQL (URL not valid)"
	}
	return Server(p.cfg)
}

// URLHasPassword reports whether a database URL (or key=value string)
// carries a password.
func URLHasPassword(url string) bool {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return false
	}
	// ParseConfig also reads PGPASSWORD and ~/.pgpass: compare with the
	// URL without them.
	if cfg.Password == "" {
		return false
	}
	return strings.Contains(url, cfg.Password) && (strings.Contains(url, ":"+cfg.Password+"@") || strings.Contains(url, "password="))
}

// retryPolicy is how the publisher and the subscriber follow the database:
// a step every cfg.Poll when idle, and after a failure a growing pause
// (0.5 s to 30 s, jittered) with the error recorded for status (record)
// and logged as warn at the first attempt and every tenth.
func retryPolicy(cfg Config, warn string, record func(err string)) follow.Policy {
	return follow.Policy{
		IdlePoll: cfg.Poll, MinBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, Jitter: 0.2,
		OnError: func(err error, retry time.Duration, attempt int) {
			record(err.Error())
			if attempt == 1 || attempt%10 == 0 {
				cfg.Logger.Warn(warn, "err", err, "retry_in", retry, "attempt", attempt)
			}
		},
	}
}
