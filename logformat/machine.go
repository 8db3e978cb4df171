package logformat

import (
	"os"
	"strings"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// MachineEnv names the environment variable that gives this machine's
// name, used in the names of the files continuity writes (MachineName).
const MachineEnv = "CONTINUITY_MACHINE"

// MachineSep separates a file name's session (or other base) from the
// machine that writes it: session-<id>~<machine>.jsonl. A session id
// never holds it (ValidSessionID), so the session read from such a name
// is the same on every machine.
const MachineSep = "~"

// maxMachineLen bounds a machine's name in a file name.
const maxMachineLen = 64

// MachineName is the name of this machine in the files it writes:
// $CONTINUITY_MACHINE, else the host name, made safe for a file name
// (SanitizeMachine). Two machines that share the logs (a sync tool, a git
// repository) each append to files of their own, never to the same one.
func MachineName() string {
	if m := SanitizeMachine(os.Getenv(MachineEnv)); m != "" {
		return m
	}
	h, _ := os.Hostname()
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i] // laptop.local, host.example.com
	}
	if m := SanitizeMachine(h); m != "" {
		return m
	}
	return "machine"
}

// SanitizeMachine keeps letters, digits, '.', '_' and '-' of name, each
// other byte becoming '-', trims the dashes and dots around it and bounds
// its length; "" when nothing is left.
func SanitizeMachine(name string) string {
	b := []byte(strings.TrimSpace(name))
	for i, c := range b {
		if !(isAlnum(c) || c == '_' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-._")
	if len(s) > maxMachineLen {
		s = strings.TrimRight(s[:maxMachineLen], "-._")
	}
	return s
}

// MachineLogName is the log base+".jsonl" written by machine:
// <base>~<machine>.jsonl.
func MachineLogName(base, machine string) string {
	return base + MachineSep + machine + ".jsonl"
}

// conflictMarks match what sync tools add to the name of a conflict
// copy: Syncthing's ".sync-conflict-YYYYMMDD-HHMMSS-DEVICE" (before the
// extension), Dropbox's " (X's conflicted copy YYYY-MM-DD)" (and
// Nextcloud's " (conflicted copy ...)").
var conflictMarks = lazyre.New(`\.sync-conflict-\d{8}-\d{6}(-[A-Za-z0-9]+)?| \([^()]*conflicted copy[^()]*\)`)

// ConflictCopy reports whether name is a sync tool's conflict copy of
// another file, and that file's name.
func ConflictCopy(name string) (of string, ok bool) {
	loc := conflictMarks().FindStringIndex(name)
	if loc == nil {
		return name, false
	}
	return name[:loc[0]] + name[loc[1]:], true
}

// SyncTemp reports whether name is a sync tool's file being written
// (Syncthing's .syncthing.*.tmp and ~syncthing~*.tmp): never a log.
func SyncTemp(name string) bool {
	return strings.HasPrefix(name, ".syncthing.") && strings.HasSuffix(name, ".tmp") ||
		strings.HasPrefix(name, "~syncthing~")
}
