package share

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgpassfile"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SchemaVersion is the version of the schema Init creates.
const SchemaVersion = 1

// MemberRole is the group role every member's login role is granted: the
// privileges on the tables go to it, the rows each member sees are chosen
// by row-level security on team membership.
const MemberRole = "continuity_member"

// schemaSQL creates or upgrades the schema; every statement can run again.
// The tables are owned by the role that runs Init (the database owner);
// row-level security is forced, so that the owner too goes through the
// policies (its own policy lets it manage everything).
const schemaSQL = `
CREATE TABLE IF NOT EXISTS continuity_schema (version int NOT NULL);

CREATE TABLE IF NOT EXISTS continuity_teams (
	name       text PRIMARY KEY CHECK (name <> ''),
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS continuity_members (
	team      text NOT NULL REFERENCES continuity_teams (name) ON DELETE CASCADE,
	role_name name NOT NULL,
	admin     boolean NOT NULL DEFAULT false,
	added_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (team, role_name)
);

-- One per machine-workspace index (its instance id): what it shipped.
CREATE TABLE IF NOT EXISTS continuity_origins (
	team       text NOT NULL REFERENCES continuity_teams (name) ON DELETE CASCADE,
	id         text NOT NULL,
	scope      text NOT NULL,
	owner      name NOT NULL DEFAULT current_user,
	machine    text NOT NULL,
	shipped    bigint NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (team, id)
);

-- Redacted fields only: never the raw line.
CREATE TABLE IF NOT EXISTS continuity_events (
	seq              bigserial PRIMARY KEY,
	team             text NOT NULL,
	scope            text NOT NULL,
	origin           text NOT NULL,
	origin_row       bigint NOT NULL,
	id               text NOT NULL,
	session          text NOT NULL,
	kind             text NOT NULL,
	ts               timestamptz NOT NULL,
	user_text        text,
	ai_text          text,
	reason           text,
	previous_session text,
	agent            text,
	machine          text NOT NULL,
	author           name NOT NULL DEFAULT current_user,
	shipped_at       timestamptz NOT NULL DEFAULT now(),
	FOREIGN KEY (team, origin) REFERENCES continuity_origins (team, id) ON DELETE CASCADE,
	UNIQUE (team, origin, origin_row)
);
CREATE UNIQUE INDEX IF NOT EXISTS continuity_events_id ON continuity_events (team, scope, id);
CREATE INDEX IF NOT EXISTS continuity_events_session ON continuity_events (team, scope, session);

-- Forgotten sessions (event_id null) and removed lines.
CREATE TABLE IF NOT EXISTS continuity_removals (
	seq      bigserial PRIMARY KEY,
	team     text NOT NULL REFERENCES continuity_teams (name) ON DELETE CASCADE,
	scope    text NOT NULL,
	session  text NOT NULL,
	event_id text,
	by_role  name NOT NULL DEFAULT current_user,
	at       timestamptz NOT NULL DEFAULT now(),
	xid      xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE UNIQUE INDEX IF NOT EXISTS continuity_removals_session ON continuity_removals (team, scope, session) WHERE event_id IS NULL;
-- A removed line names the row version it removes (its origin and row): a
-- changed line that kept its id ships again under a new row, which the
-- removal of the old one must leave alone.
ALTER TABLE continuity_removals ADD COLUMN IF NOT EXISTS origin text, ADD COLUMN IF NOT EXISTS origin_row bigint;
-- Where an origin's index lives (a hash of the machine and the workspace's
-- path): a rebuilt index is a new origin of the same place, which takes
-- over the rows its previous origins shipped.
ALTER TABLE continuity_origins ADD COLUMN IF NOT EXISTS place text;

DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'continuity_member') THEN
		CREATE ROLE continuity_member NOLOGIN;
	END IF;
END $$;

GRANT SELECT ON continuity_schema, continuity_teams, continuity_members TO continuity_member;
GRANT SELECT, INSERT, UPDATE ON continuity_origins TO continuity_member;
GRANT SELECT, INSERT, DELETE ON continuity_events TO continuity_member;
GRANT SELECT, INSERT ON continuity_removals TO continuity_member;
GRANT USAGE ON SEQUENCE continuity_events_seq_seq, continuity_removals_seq_seq TO continuity_member;

ALTER TABLE continuity_teams ENABLE ROW LEVEL SECURITY;
ALTER TABLE continuity_teams FORCE ROW LEVEL SECURITY;
ALTER TABLE continuity_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE continuity_members FORCE ROW LEVEL SECURITY;
ALTER TABLE continuity_origins ENABLE ROW LEVEL SECURITY;
ALTER TABLE continuity_origins FORCE ROW LEVEL SECURITY;
ALTER TABLE continuity_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE continuity_events FORCE ROW LEVEL SECURITY;
ALTER TABLE continuity_removals ENABLE ROW LEVEL SECURITY;
ALTER TABLE continuity_removals FORCE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS owner_all ON continuity_teams;
CREATE POLICY owner_all ON continuity_teams TO CURRENT_USER USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS owner_all ON continuity_members;
CREATE POLICY owner_all ON continuity_members TO CURRENT_USER USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS owner_all ON continuity_origins;
CREATE POLICY owner_all ON continuity_origins TO CURRENT_USER USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS owner_all ON continuity_events;
CREATE POLICY owner_all ON continuity_events TO CURRENT_USER USING (true) WITH CHECK (true);
DROP POLICY IF EXISTS owner_all ON continuity_removals;
CREATE POLICY owner_all ON continuity_removals TO CURRENT_USER USING (true) WITH CHECK (true);

-- A member sees its own memberships, and through them its teams.
DROP POLICY IF EXISTS member_self ON continuity_members;
CREATE POLICY member_self ON continuity_members FOR SELECT USING (role_name = current_user);
DROP POLICY IF EXISTS member_teams ON continuity_teams;
CREATE POLICY member_teams ON continuity_teams FOR SELECT
	USING (name IN (SELECT team FROM continuity_members WHERE role_name = current_user));

DROP POLICY IF EXISTS member_read ON continuity_origins;
CREATE POLICY member_read ON continuity_origins FOR SELECT
	USING (team IN (SELECT team FROM continuity_members WHERE role_name = current_user));
DROP POLICY IF EXISTS member_insert ON continuity_origins;
CREATE POLICY member_insert ON continuity_origins FOR INSERT
	WITH CHECK (owner = current_user AND team IN (SELECT team FROM continuity_members WHERE role_name = current_user));
DROP POLICY IF EXISTS member_update ON continuity_origins;
CREATE POLICY member_update ON continuity_origins FOR UPDATE
	USING (owner = current_user AND team IN (SELECT team FROM continuity_members WHERE role_name = current_user))
	WITH CHECK (owner = current_user);

DROP POLICY IF EXISTS member_read ON continuity_events;
CREATE POLICY member_read ON continuity_events FOR SELECT
	USING (team IN (SELECT team FROM continuity_members WHERE role_name = current_user));
DROP POLICY IF EXISTS member_insert ON continuity_events;
CREATE POLICY member_insert ON continuity_events FOR INSERT
	WITH CHECK (author = current_user
		AND team IN (SELECT team FROM continuity_members WHERE role_name = current_user)
		AND EXISTS (SELECT 1 FROM continuity_origins o
			WHERE o.team = continuity_events.team AND o.id = continuity_events.origin AND o.owner = current_user));
DROP POLICY IF EXISTS member_delete ON continuity_events;
CREATE POLICY member_delete ON continuity_events FOR DELETE
	USING (team IN (SELECT team FROM continuity_members WHERE role_name = current_user)
		AND (author = current_user
			OR team IN (SELECT team FROM continuity_members WHERE role_name = current_user AND admin)));

DROP POLICY IF EXISTS member_read ON continuity_removals;
CREATE POLICY member_read ON continuity_removals FOR SELECT
	USING (team IN (SELECT team FROM continuity_members WHERE role_name = current_user));
DROP POLICY IF EXISTS member_insert ON continuity_removals;
CREATE POLICY member_insert ON continuity_removals FOR INSERT
	WITH CHECK (by_role = current_user
		AND team IN (SELECT team FROM continuity_members WHERE role_name = current_user)
		AND (team IN (SELECT team FROM continuity_members WHERE role_name = current_user AND admin)
			OR NOT EXISTS (SELECT 1 FROM continuity_events e
				WHERE e.team = continuity_removals.team AND e.scope = continuity_removals.scope
				AND e.session = continuity_removals.session AND e.author <> current_user)));

DELETE FROM continuity_schema;
INSERT INTO continuity_schema (version) VALUES (1);
`

// Init creates or upgrades the schema on the database of url, in one
// transaction; running it again changes nothing. Run it as the database's
// owner (or a superuser): the tables belong to the role that runs it.
func Init(ctx context.Context, url string) error {
	conn, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Two inits at once would race on CREATE ... IF NOT EXISTS.
	tx, err := conn.Begin(ctx)
	if err != nil {
		return describe(conn.Config(), "init", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(726372)`); err != nil {
		return describe(conn.Config(), "init", err)
	}
	var version int
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('continuity_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return describe(conn.Config(), "init", err)
	}
	if exists {
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM continuity_schema`).Scan(&version); err != nil {
			return describe(conn.Config(), "init", err)
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("share: the database's schema is version %d, newer than this continuity's (%d): upgrade continuity", version, SchemaVersion)
	}
	if _, err := tx.Exec(ctx, schemaSQL); err != nil {
		return describe(conn.Config(), "init (create the schema; run it as the database's owner)", err)
	}
	return describe(conn.Config(), "init", tx.Commit(ctx))
}

// MemberOptions add a member to a team.
type MemberOptions struct {
	Team, User string
	// Admin lets the member forget any session of the team.
	Admin bool
	// Password is the new login role's password (only used when the role
	// does not exist yet); "" leaves a role without a password, which
	// cannot log in over TCP.
	Password string
}

// MemberResult says what AddMember did.
type MemberResult struct {
	RoleCreated bool
	TeamCreated bool
	WasMember   bool
}

// AddMember creates the login role User if missing, the team if missing,
// and makes the role a member (admin or not) of the team.
func AddMember(ctx context.Context, url string, o MemberOptions) (MemberResult, error) {
	var res MemberResult
	if err := checkName("team", o.Team); err != nil {
		return res, err
	}
	if err := checkName("user", o.User); err != nil {
		return res, err
	}
	conn, err := connect(ctx, url)
	if err != nil {
		return res, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	cfg := conn.Config()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return res, describe(cfg, "add-member", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, o.User).Scan(&exists); err != nil {
		return res, describe(cfg, "add-member", err)
	}
	role := pgx.Identifier{o.User}.Sanitize()
	if !exists {
		stmt := "CREATE ROLE " + role + " LOGIN"
		if o.Password != "" {
			stmt += " PASSWORD " + quoteLiteral(o.Password)
		}
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return res, describe(cfg, "add-member: create the login role "+o.User+" (run it as a role with CREATEROLE)", err)
		}
		res.RoleCreated = true
	}
	if _, err := tx.Exec(ctx, "GRANT "+MemberRole+" TO "+role); err != nil {
		return res, describe(cfg, "add-member: grant "+MemberRole+" to "+o.User+" (run 'continuity share init' first)", err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO continuity_teams (name) VALUES ($1) ON CONFLICT DO NOTHING`, o.Team)
	if err != nil {
		return res, describe(cfg, "add-member (run 'continuity share init' first)", err)
	}
	res.TeamCreated = tag.RowsAffected() == 1
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM continuity_members WHERE team = $1 AND role_name = $2)`, o.Team, o.User).Scan(&res.WasMember)
	if err != nil {
		return res, describe(cfg, "add-member", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO continuity_members (team, role_name, admin) VALUES ($1, $2, $3)
		ON CONFLICT (team, role_name) DO UPDATE SET admin = excluded.admin`, o.Team, o.User, o.Admin); err != nil {
		return res, describe(cfg, "add-member", err)
	}
	return res, describe(cfg, "add-member", tx.Commit(ctx))
}

// RemoveMember takes User out of Team: it no longer reads nor writes the
// team's memory (what it shipped stays, as the team's). The login role is
// kept (it may belong to other teams). It reports whether it was a member.
func RemoveMember(ctx context.Context, url, team, user string) (bool, error) {
	conn, err := connect(ctx, url)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tag, err := conn.Exec(ctx, `DELETE FROM continuity_members WHERE team = $1 AND role_name = $2`, team, user)
	if err != nil {
		return false, describe(conn.Config(), "remove-member", err)
	}
	return tag.RowsAffected() > 0, nil
}

// checkName refuses names PostgreSQL would fold or truncate.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("share: no %s given", what)
	}
	if len(s) > 63 {
		return fmt.Errorf("share: %s %q is longer than 63 bytes", what, s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("share: %s %q: use lower-case letters, digits, '_', '-' and '.'", what, s)
		}
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// connect opens one connection; its error names the server without the
// password and says what to check.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("share: the database URL is not valid: %s", redactURLError(err, url))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, describe(cfg, "connect", err)
	}
	return conn, nil
}

// Server names a connection's server for messages: user@host:port/db,
// never the password.
func Server(cfg *pgx.ConnConfig) string {
	if cfg == nil {
		return "PostgreSQL"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// describe wraps a PostgreSQL error with the server and what to do.
func describe(cfg *pgx.ConnConfig, what string, err error) error {
	if err == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(err.Error()), " ") // pgx's messages span lines
	if cfg != nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	}
	hint := ""
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42501":
		hint = ": permission denied: is this role a member of the team ('continuity share add-member'), and is the session yours?"
	case errors.As(err, &pe) && pe.Code == "28P01":
		hint = ": wrong password: set it in PGPASSFILE (~/.pgpass) or PGPASSWORD"
	case errors.As(err, &pe) && pe.Code == "42P01":
		hint = ": the schema is missing: run 'continuity share init --db URL' as the database's owner"
	case strings.Contains(msg, "tls error") || strings.Contains(msg, "tls: ") || strings.Contains(msg, "x509: "):
		hint = ": TLS failed: the server refused TLS or its certificate did not verify; check sslmode in the URL (disable, require, verify-full) and the server's certificate"
	case pgconn.SafeToRetry(err) || strings.Contains(msg, "connect"):
		hint = ": is the server up and reachable? the daemon keeps working locally and ships when it is back"
	}
	return fmt.Errorf("share: %s on %s: %s%s", what, Server(cfg), msg, hint)
}

func redactURLError(err error, url string) string {
	msg := err.Error()
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				msg = strings.ReplaceAll(msg, rest[c+1:at], "xxxxx")
			}
		}
	}
	return msg
}

// MemberPassword finds the password of a new member's login role user,
// never on the command line: file (a 0600 file), else
// CONTINUITY_MEMBER_PASSWORD, else the entry for user in the password file
// (PGPASSFILE, else ~/.pgpass) matching the database of url, else
// PGPASSWORD when url carries the owner's own password (so that
// PGPASSWORD is not the owner's). It says where the password came from;
// "" and "" when there is none.
func MemberPassword(url, user, file string) (password, source string, err error) {
	if file != "" {
		fi, err := os.Stat(file)
		if err != nil {
			return "", "", err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", "", fmt.Errorf("--password-file %s is readable by others (%s): chmod 600 it", file, fi.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", err
		}
		return strings.TrimRight(string(b), "\r\n"), file, nil
	}
	if pw := os.Getenv("CONTINUITY_MEMBER_PASSWORD"); pw != "" {
		return pw, "CONTINUITY_MEMBER_PASSWORD", nil
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", "", fmt.Errorf("share: the database URL is not valid: %s", redactURLError(err, url))
	}
	passfile := os.Getenv("PGPASSFILE")
	if passfile == "" {
		if home, err := os.UserHomeDir(); err == nil {
			passfile = filepath.Join(home, ".pgpass")
		}
	}
	if passfile != "" {
		if pf, err := pgpassfile.ReadPassfile(passfile); err == nil {
			if pw := pf.FindPassword(cfg.Host, strconv.Itoa(int(cfg.Port)), cfg.Database, user); pw != "" {
				return pw, passfile, nil
			}
		}
	}
	if pw := os.Getenv("PGPASSWORD"); pw != "" && URLHasPassword(url) {
		return pw, "PGPASSWORD", nil
	}
	return "", "", nil
}
