package engine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
)

// Checks of doctor for the faults a running daemon cannot fix by itself
// (the fault matrix of issue 11): a full disk, a foreign process holding
// index.db's write lock, producers whose clock runs ahead.

// Free space under which doctor warns, and fails.
const (
	diskWarnBytes = 64 << 20
	diskFailBytes = 4 << 20
)

// checkDiskSpace: SQLite cannot commit on a full filesystem; the daemon
// then retries, keeping every line in the logs, until there is room.
func (d *doctor) checkDiskSpace() {
	const name = "disk space"
	dir := d.ws.Cache
	if _, err := os.Stat(dir); err != nil {
		dir = d.ws.Root
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	total := int64(st.Blocks) * int64(st.Bsize)
	msg := fmt.Sprintf("%s free of %s on the filesystem of %s", HumanBytes(free), HumanBytes(total), dir)
	switch {
	case free < diskFailBytes:
		d.add(name, StatusFail, msg+": the index cannot grow, so new lines wait in the logs (none is lost; the daemon retries)",
			"free some space on that filesystem; the daemon catches up by itself")
	case free < diskWarnBytes:
		d.add(name, StatusWarn, msg+": little room left for the index", "free some space on that filesystem")
	default:
		d.add(name, StatusOK, msg, "")
	}
}

// checkWriteLock finds a process other than the daemon holding index.db's
// write lock (a sqlite3 shell in a transaction, a backup tool): the daemon's
// commits then fail with "database is locked" and are retried; lines wait
// in the logs. In WAL mode the write lock is byte 120 of index.db-shm,
// which /proc/locks (Linux) shows with its holder.
func (d *doctor) checkWriteLock() {
	const name = "index write lock"
	shm := d.ws.Cache + "/" + index.FileName + "-shm"
	var st syscall.Stat_t
	if err := syscall.Stat(shm, &st); err != nil {
		return
	}
	// A daemon holds it for a few milliseconds per commit: look thrice.
	var pid int
	for i := 0; i < 3; i++ {
		if pid = shmWriteLocker(st.Ino, d.holder); pid == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.add(name, StatusFail,
		fmt.Sprintf("process %d (%s) holds the index's write lock: the daemon cannot commit (\"database is locked\"); new lines wait in the logs, none is lost",
			pid, processName(pid)),
		fmt.Sprintf("end that process's transaction, or stop it (kill %d); the daemon catches up by itself", pid))
}

// shmWriteLocker is a pid other than except holding a POSIX write lock on
// byte 120 (SQLite's WAL write lock) of the file with inode ino.
func shmWriteLocker(ino uint64, except int) int {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	want := ":" + strconv.FormatUint(ino, 10)
	for _, line := range strings.Split(string(data), "\n") {
		// "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 120 120"
		f := strings.Fields(line)
		if len(f) < 8 || f[1] != "POSIX" || f[3] != "WRITE" || !strings.HasSuffix(f[5], want) {
			continue
		}
		start, err1 := strconv.ParseInt(f[6], 10, 64)
		end, err2 := strconv.ParseInt(f[7], 10, 64)
		if err1 != nil || (err2 != nil && f[7] != "EOF") || start > 120 || (err2 == nil && end < 120) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid != except && pid != os.Getpid() {
			return pid
		}
	}
	return 0
}

// processName is the command name of pid, "?" when unknown.
func processName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// checkClock warns about events dated after the moment they were read (a
// producer's clock ahead, or local time written with "Z"): they sort
// after everything written since.
func (d *doctor) checkClock(ctx context.Context) {
	const name = "event times"
	if !d.indexOK {
		return
	}
	db, err := index.Open(d.ws.Cache, index.Options{ReadOnly: true})
	if err != nil {
		return
	}
	defer db.Close()
	a, err := db.EventsAhead(ctx)
	switch {
	case err != nil:
		return
	case a.Events > 0:
		var sessions []string
		for _, s := range a.Sessions {
			sessions = append(sessions, fmt.Sprintf("%s (%d)", s.Session, s.Events))
		}
		d.add(name, StatusWarn,
			fmt.Sprintf("%d %s dated after the moment %s read, up to %s ahead (the latest %s; sessions %s): they sort as the future, after everything written since; `resume --latest` takes the session written to last, not these times, but time-relative search reads them",
				a.Events, words.Plural(int(a.Events), "event is", "events are"), words.Plural(int(a.Events), "it was", "they were"),
				a.Most.Round(time.Minute), a.Latest.Format(time.RFC3339), strings.Join(sessions, ", ")),
			"fix the producer's clock, or its timestamps: a local time must carry its offset (+hh:mm), not \"Z\"; `forget --session` removes the events")
	default:
		d.add(name, StatusOK, "no event is dated after the moment it was read", "")
	}
}
