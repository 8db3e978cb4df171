package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/share"
)

// shareBacklogWarn is how old the oldest event not shipped may get
// before doctor warns.
const shareBacklogWarn = 5 * time.Minute

// checkShare says how team memory stands when the daemon shares
// (daemon --share): the backlog (events not shipped and the age of the
// oldest), the last failure to ship or pull, with the server and what to
// do. Nothing when no daemon shares.
func (d *doctor) checkShare(ctx context.Context) {
	const name = "team memory"
	if !d.daemon {
		return
	}
	var r share.Report
	if d.c.viewReport(ctx, "share", &r) != nil || r.Team == "" {
		return
	}
	msg := fmt.Sprintf("team %s, scope %s, on %s: %d %s not shipped yet", r.Team, r.Scope, r.Server, r.Backlog, words.Plural(int(r.Backlog), "event", "events"))
	if r.Backlog > 0 && r.BacklogAge != "" {
		msg += ", the oldest " + r.BacklogAge + " old"
	}
	msg += fmt.Sprintf("; %d %s of teammates pulled since the daemon started", r.Pulled, words.Plural(int(r.Pulled), "event", "events"))
	age, _ := time.ParseDuration(r.BacklogAge)
	switch {
	case r.LastError != "" || r.PullError != "":
		e := r.LastError
		if e == "" {
			e = r.PullError
		}
		d.add(name, StatusWarn, msg+"; last error: "+e,
			"check the server and the role's password (~/.pgpass or PGPASSWORD); 'continuity share status --db URL' shows what the database holds")
	case age > shareBacklogWarn:
		d.add(name, StatusWarn, msg, "shipping is behind: see the daemon's log")
	default:
		d.add(name, StatusOK, msg, "")
	}
}
