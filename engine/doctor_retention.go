package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/praxis-os/continuity/importer"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/workspace"
)

// The retention guard of `doctor`: agents delete their own history.
// Claude Code removes every transcript whose last change is older than
// cleanupPeriodDays (default 30) each time it starts, without a trace;
// an imported session outlives that, but only if it was imported in time.
// The check lists this workspace's Claude Code transcripts (of every
// worktree of its repository) that the logs do not hold yet, and warns
// when any of them is past the period (deleted at Claude Code's next
// start) or within a week of it.

// claudeDefaultCleanupDays is Claude Code's default cleanupPeriodDays.
const claudeDefaultCleanupDays = 30

// retentionSoon is how close to its deletion a never-imported transcript
// makes the check warn.
const retentionSoon = 7 * 24 * time.Hour

// claudeManagedSettings are the managed (organisation) settings files,
// which take precedence over the user's.
var claudeManagedSettings = []string{
	"/etc/claude-code/managed-settings.json",
	"/Library/Application Support/ClaudeCode/managed-settings.json",
}

// claudeCleanupPeriod is the cleanupPeriodDays Claude Code applies to a
// project at root and the settings file it comes from ("" for the
// default), in Claude Code's precedence: managed settings, the project's
// .claude/settings.local.json, its .claude/settings.json, the user's
// settings.json. A settings file that is not JSON is reported in bad.
func claudeCleanupPeriod(h importer.Home, root string) (days int, from string, bad []string) {
	files := append([]string{}, claudeManagedSettings...)
	files = append(files,
		filepath.Join(root, ".claude", "settings.local.json"),
		filepath.Join(root, ".claude", "settings.json"),
		filepath.Join(h.ClaudeDir, "settings.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			Cleanup *float64 `json:"cleanupPeriodDays"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			bad = append(bad, f)
			continue
		}
		if s.Cleanup != nil {
			return int(*s.Cleanup), f, bad
		}
	}
	return claudeDefaultCleanupDays, "", bad
}

// claudeTranscript is one Claude Code session file of the workspace.
type claudeTranscript struct {
	path    string
	session string
	mtime   time.Time
}

// claudeTranscripts lists the session files (not the subagents') of the
// Claude Code project folders of dirs.
func claudeTranscripts(h importer.Home, dirs []string) []claudeTranscript {
	var out []claudeTranscript
	for _, dir := range dirs {
		names, _ := filepath.Glob(filepath.Join(h.ClaudeProjectDir(dir), "*.jsonl"))
		for _, n := range names {
			fi, err := os.Stat(n)
			base := strings.TrimSuffix(filepath.Base(n), ".jsonl")
			if err != nil || !fi.Mode().IsRegular() || strings.HasPrefix(base, "agent-") {
				continue
			}
			out = append(out, claudeTranscript{path: n, session: base, mtime: fi.ModTime()})
		}
	}
	return out
}

// checkRetention warns about the transcripts an agent's own cleanup will
// delete before they were imported.
func (d *doctor) checkRetention() {
	const name = "retention"
	h := importer.DefaultHome("")
	days, from, bad := claudeCleanupPeriod(h, d.ws.Root)
	setting := fmt.Sprintf("cleanupPeriodDays %d, Claude Code's default", days)
	if from != "" {
		setting = fmt.Sprintf("cleanupPeriodDays %d, from %s", days, from)
	}
	if len(bad) > 0 {
		setting += "; not JSON, not read: " + strings.Join(bad, ", ")
	}
	transcripts := claudeTranscripts(h, workspace.Worktrees(d.ws.Root))
	if len(transcripts) == 0 {
		d.add(name, StatusOK, "no Claude Code transcripts of this workspace to lose ("+setting+")", "")
		return
	}
	st, err := importer.OpenStore(d.ws.Logs, importer.ClaudeCode)
	if err != nil {
		d.add(name, StatusWarn, "cannot read the logs to tell which Claude Code transcripts are imported: "+err.Error(), "check the logs folder (see the checks above)")
		return
	}
	period := time.Duration(days) * 24 * time.Hour
	now := time.Now()
	var pending, overdue, soon int
	var oldest time.Time
	for _, t := range transcripts {
		if st.HasSession(t.session) {
			continue
		}
		pending++
		due := t.mtime.Add(period)
		switch {
		case days <= 0 || !due.After(now):
			overdue++
		case due.Sub(now) <= retentionSoon:
			soon++
		}
		if oldest.IsZero() || t.mtime.Before(oldest) {
			oldest = t.mtime
		}
	}
	fix := "import them now with `continuity import --from claude-code`, or keep them imported as they are written with `continuity daemon --import all` (or CONTINUITY_IMPORT=all)"
	switch {
	case pending == 0:
		d.add(name, StatusOK, fmt.Sprintf("all %d Claude Code %s of this workspace are imported (%s)", len(transcripts), words.Plural(len(transcripts), "transcript", "transcripts"), setting), "")
	case overdue+soon > 0:
		msg := fmt.Sprintf("%d of %d Claude Code %s of this workspace %s never imported: ", pending, len(transcripts), words.Plural(len(transcripts), "transcript", "transcripts"), words.Plural(pending, "was", "were"))
		var parts []string
		if overdue > 0 {
			parts = append(parts, fmt.Sprintf("%d %s past the retention period and %s at Claude Code's next start", overdue, words.Plural(overdue, "is", "are"), words.Plural(overdue, "goes", "go")))
		}
		if soon > 0 {
			parts = append(parts, fmt.Sprintf("%d %s within %d days", soon, words.Plural(soon, "goes", "go"), int(retentionSoon.Hours()/24)))
		}
		d.add(name, StatusWarn, msg+strings.Join(parts, ", ")+" ("+setting+")", fix)
	default:
		left := oldest.Add(period).Sub(now)
		d.add(name, StatusOK, fmt.Sprintf("%d Claude Code %s of this workspace not imported yet; the oldest is deleted by Claude Code in %d days (%s)",
			pending, words.Plural(pending, "transcript", "transcripts"), int(left.Hours()/24), setting), fix)
	}
}
