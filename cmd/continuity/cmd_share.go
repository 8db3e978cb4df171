package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/share"
)

// shareFlags are the daemon's team memory flags.
type shareFlags struct{ url, team, scope string }

func (s *shareFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.url, "share", os.Getenv("CONTINUITY_SHARE"), "share this workspace's memory with a team on the PostgreSQL at this `URL` (postgres://USER@HOST/DB; the password from PGPASSFILE or PGPASSWORD, never the URL); needs --team (env CONTINUITY_SHARE)")
	fs.StringVar(&s.team, "team", os.Getenv("CONTINUITY_TEAM"), "the `TEAM` whose memory --share shares (env CONTINUITY_TEAM)")
	fs.StringVar(&s.scope, "scope", os.Getenv("CONTINUITY_SCOPE"), "the repository whose teammates' memory is pulled (default: the normalised git remote \"origin\", else the first commit; env CONTINUITY_SCOPE)")
}

func (s *shareFlags) options() (*engine.Share, error) {
	switch {
	case s.url == "" && s.team == "":
		return nil, nil
	case s.url == "":
		return nil, usageError("--team %s needs --share URL (or CONTINUITY_SHARE)", s.team)
	case s.team == "":
		return nil, usageError("--share needs --team TEAM (or CONTINUITY_TEAM)")
	}
	sh := &engine.Share{URL: s.url, Team: s.team, Scope: s.scope}
	if share.URLHasPassword(s.url) && s.url != os.Getenv("CONTINUITY_SHARE") { // on the command line
		sh.Warning = "the --share URL holds a password, which every user of this machine can read in the process list: leave it out and put it in ~/.pgpass (PGPASSFILE) or PGPASSWORD"
	}
	return sh, nil
}

func runShare(ctx context.Context, e *env, args []string) error {
	usage := `
Team memory on PostgreSQL (docs/share.md). Subcommands:

  init --db URL                 create or upgrade the schema (idempotent); run it
                                as the database's owner
  add-member --db URL --team TEAM --user NAME [--admin] [--password-file FILE]
                                create the login role NAME if missing and add it
                                to TEAM (created if missing); its password from
                                --password-file (a 0600 file), else
                                CONTINUITY_MEMBER_PASSWORD, else NAME's entry in
                                PGPASSFILE (~/.pgpass), else PGPASSWORD when the
                                URL holds the owner's own; never the command
                                line; --admin lets it forget any session of the
                                team
  remove-member --db URL --team TEAM --user NAME
                                take NAME out of TEAM
  status --db URL [--team TEAM] what this role sees: teams, members, origins and
                                how many events each shipped
  private [SESSION|--workspace] mark a session (or the whole workspace) private:
                                it never leaves this machine; no argument lists
                                the marks

Then run 'continuity daemon --share URL --team TEAM' in each workspace.`
	sub := "SUBCOMMAND"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	} else if len(args) == 0 {
		args = []string{"--help"}
	}
	fs := newFlags(e, "share "+sub+" [flags]", usage)
	db := fs.String("db", os.Getenv("CONTINUITY_SHARE"), "the team's database `URL` (env CONTINUITY_SHARE); the password from PGPASSFILE or PGPASSWORD")
	team := fs.String("team", os.Getenv("CONTINUITY_TEAM"), "the `TEAM` (env CONTINUITY_TEAM)")
	user := fs.String("user", "", "the member's login role `NAME`")
	admin := fs.Bool("admin", false, "add-member: the member may forget any session of the team")
	pwFile := fs.String("password-file", "", "add-member: a 0600 `FILE` holding the new role's password (else CONTINUITY_MEMBER_PASSWORD)")
	workspace := fs.Bool("workspace", false, "private: mark the whole workspace private")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	needDB := func() error {
		if *db == "" {
			return usageError("share %s: give --db URL (or CONTINUITY_SHARE)", sub)
		}
		return nil
	}
	switch sub {
	case "init":
		if err := needDB(); err != nil {
			return err
		}
		if err := share.Init(ctx, *db); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "schema version %d ready; add members with 'continuity share add-member'\n", share.SchemaVersion)
		return nil
	case "add-member":
		if err := needDB(); err != nil {
			return err
		}
		pw, source, err := share.MemberPassword(*db, *user, *pwFile)
		if err != nil {
			return err
		}
		res, err := share.AddMember(ctx, *db, share.MemberOptions{Team: *team, User: *user, Admin: *admin, Password: pw})
		if err != nil {
			return err
		}
		switch {
		case res.RoleCreated && pw == "":
			fmt.Fprintf(e.stdout, "created the login role %s without a password: set one (ALTER ROLE) before it logs in over TCP\n", *user)
		case res.RoleCreated:
			fmt.Fprintf(e.stdout, "created the login role %s (its password from %s)\n", *user, source)
		}
		if res.TeamCreated {
			fmt.Fprintf(e.stdout, "created the team %s\n", *team)
		}
		role := "member"
		if *admin {
			role = "admin"
		}
		fmt.Fprintf(e.stdout, "%s is a %s of team %s\n", *user, role, *team)
		return nil
	case "remove-member":
		if err := needDB(); err != nil {
			return err
		}
		was, err := share.RemoveMember(ctx, *db, *team, *user)
		if err != nil {
			return err
		}
		if !was {
			return fmt.Errorf("%s is not a member of team %s", *user, *team)
		}
		fmt.Fprintf(e.stdout, "%s is no longer a member of team %s (what it shipped stays the team's)\n", *user, *team)
		return nil
	case "status":
		if err := needDB(); err != nil {
			return err
		}
		st, err := share.Status(ctx, *db, *team)
		if err != nil {
			return err
		}
		fmt.Fprint(e.stdout, st.String())
		return nil
	case "private":
		p, err := e.paths()
		if err != nil {
			return err
		}
		if *workspace {
			pos = append(pos, "*")
		}
		if len(pos) == 0 {
			marks, err := share.ReadPrivate(p.logs)
			if err != nil {
				return err
			}
			if len(marks.List()) == 0 {
				fmt.Fprintln(e.stdout, "nothing marked private")
			}
			for _, m := range marks.List() {
				if m == "*" {
					m = "the whole workspace"
				}
				fmt.Fprintln(e.stdout, m)
			}
			return nil
		}
		for _, s := range pos {
			if _, err := share.MarkPrivate(p.logs, s); err != nil {
				return err
			}
			what := "session " + s
			if s == "*" {
				what = "the whole workspace"
			}
			fmt.Fprintf(e.stdout, "%s is private: never shipped (what was shipped before stays until you forget it)\n", what)
		}
		return nil
	}
	return usageError("share: unknown subcommand %q (init, add-member, remove-member, status, private)", sub)
}
