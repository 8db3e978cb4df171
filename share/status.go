package share

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TeamStatus is what a role sees of the team memory.
type TeamStatus struct {
	Server  string
	User    string
	Members []MemberStatus
	Origins []OriginStatus
}

// MemberStatus is one membership.
type MemberStatus struct {
	Team, User string
	Admin      bool
}

// OriginStatus is one machine-workspace that shipped.
type OriginStatus struct {
	Team, Scope, Owner, Machine, ID string
	Events                          int64
	Updated                         time.Time
}

// Status reads what the URL's role sees (every row for the owner), of
// one team or all.
func Status(ctx context.Context, url, team string) (TeamStatus, error) {
	conn, err := connect(ctx, url)
	if err != nil {
		return TeamStatus{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st := TeamStatus{Server: Server(conn.Config()), User: conn.Config().User}
	rows, err := conn.Query(ctx, `SELECT team, role_name, admin FROM continuity_members WHERE $1 = '' OR team = $1 ORDER BY team, role_name`, team)
	if err != nil {
		return st, describe(conn.Config(), "status", err)
	}
	for rows.Next() {
		var m MemberStatus
		if err := rows.Scan(&m.Team, &m.User, &m.Admin); err != nil {
			rows.Close()
			return st, describe(conn.Config(), "status", err)
		}
		st.Members = append(st.Members, m)
	}
	rows.Close()
	rows, err = conn.Query(ctx, `SELECT o.team, o.scope, o.owner, o.machine, o.id, o.updated_at,
		(SELECT count(*) FROM continuity_events e WHERE e.team = o.team AND e.origin = o.id)
		FROM continuity_origins o WHERE $1 = '' OR o.team = $1 ORDER BY o.team, o.scope, o.owner, o.machine`, team)
	if err != nil {
		return st, describe(conn.Config(), "status", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o OriginStatus
		if err := rows.Scan(&o.Team, &o.Scope, &o.Owner, &o.Machine, &o.ID, &o.Updated, &o.Events); err != nil {
			return st, describe(conn.Config(), "status", err)
		}
		st.Origins = append(st.Origins, o)
	}
	return st, describe(conn.Config(), "status", rows.Err())
}

// String is the status for people.
func (st TeamStatus) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %s (as %s)\n", st.Server, st.User)
	if len(st.Members) == 0 {
		b.WriteString("no team visible to this role: add it with 'continuity share add-member'\n")
	}
	for _, m := range st.Members {
		role := "member"
		if m.Admin {
			role = "admin"
		}
		fmt.Fprintf(&b, "team %s: %s (%s)\n", m.Team, m.User, role)
	}
	for _, o := range st.Origins {
		unit := "events"
		if o.Events == 1 {
			unit = "event"
		}
		fmt.Fprintf(&b, "  %s %s@%s [%s]: %d %s shipped, updated %s\n", o.Team, o.Owner, o.Machine, o.Scope, o.Events, unit, o.Updated.UTC().Format(time.RFC3339))
	}
	return b.String()
}
