package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The naive loader is the baseline of `continuity-bench ingest` (issue 13):
// what anyone would write in ten minutes to load the logs into a searchable
// SQLite file. Each line is JSON-decoded; its session, timestamp, user and
// ai texts go into a plain table and the texts into an FTS5 table, all in
// one transaction, committed once at the end. The FTS5 table uses the same
// tokenizer as continuity's full-text index ('porter unicode61
// remove_diacritics 2'), so both do the same tokenising work; it keeps its
// own copy of the texts (FTS5's default, what a naive loader gets), and the
// database has SQLite's defaults (rollback journal, synchronous=FULL).
//
// It skips what continuity does on top: validation beyond JSON, redaction,
// the raw line, exactly-once offsets, sessions and links, rejects.

const naiveSchema = `
CREATE TABLE events (session_id TEXT, ts TEXT, user TEXT, ai TEXT);
CREATE VIRTUAL TABLE events_fts USING fts5(user, ai, tokenize = 'porter unicode61 remove_diacritics 2');
`

// naiveGo loads the logs with encoding/json and mattn/go-sqlite3 (the same
// SQLite build as continuity) and returns lines per second.
func naiveGo(logs, dbPath string) (float64, error) {
	files, err := logFiles(logs)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(naiveSchema); err != nil {
		return 0, fmt.Errorf("naive loader: %w", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO events (session_id, ts, user, ai) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	fts, err := tx.Prepare(`INSERT INTO events_fts (rowid, user, ai) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	var lines int
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				Type      string `json:"type"`
				SessionID string `json:"session_id"`
				Timestamp string `json:"timestamp"`
				User      string `json:"user"`
				AI        string `json:"ai"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				f.Close()
				return 0, fmt.Errorf("naive loader: %s: %w", name, err)
			}
			res, err := ins.Exec(ev.SessionID, ev.Timestamp, ev.User, ev.AI)
			if err != nil {
				f.Close()
				return 0, err
			}
			if ev.Type == "exchange" {
				id, _ := res.LastInsertId()
				if _, err := fts.Exec(id, ev.User, ev.AI); err != nil {
					f.Close()
					return 0, err
				}
			}
			lines++
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return float64(lines) / time.Since(start).Seconds(), nil
}

// naivePythonScript is the reference loader: json.loads + sqlite3 +
// FTS5, the same schema and transaction as naiveGo. It prints lines/s.
const naivePythonScript = `
import json, sqlite3, sys, time
start = time.perf_counter()
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.executescript(sys.argv[2])
db.execute("BEGIN")
n = 0
for name in sys.argv[3:]:
    with open(name, "rb") as f:
        for line in f:
            ev = json.loads(line)
            cur = db.execute("INSERT INTO events (session_id, ts, user, ai) VALUES (?, ?, ?, ?)",
                (ev.get("session_id"), ev.get("timestamp"), ev.get("user"), ev.get("ai")))
            if ev.get("type") == "exchange":
                db.execute("INSERT INTO events_fts (rowid, user, ai) VALUES (?, ?, ?)",
                    (cur.lastrowid, ev.get("user"), ev.get("ai")))
            n += 1
db.execute("COMMIT")
db.close()
print(n / (time.perf_counter() - start))
`

// naivePython runs naivePythonScript with python3 and returns lines per
// second; ok is false when python3 (or its sqlite3 with FTS5) is missing.
func naivePython(ctx context.Context, logs, dbPath string) (rate float64, ok bool, cpu time.Duration, err error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return 0, false, 0, nil
	}
	files, err := logFiles(logs)
	if err != nil {
		return 0, false, 0, err
	}
	args := append([]string{"-c", naivePythonScript, dbPath, naiveSchema}, files...)
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, false, 0, fmt.Errorf("python naive loader: %w", err)
	}
	rate, err = strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, false, 0, fmt.Errorf("python naive loader printed %q", out)
	}
	return rate, true, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// logFiles lists the *.jsonl files of logs in name order.
func logFiles(logs string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(logs, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}
