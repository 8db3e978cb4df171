package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPowerShellBOM: Windows PowerShell 5.1 (Out-File -Encoding utf8,
// Add-Content -Encoding utf8 on a new file) writes a UTF-8 byte order mark
// at the start of the file and CRLF line ends. The first event is not lost
// (before, it was rejected as invalid JSON), the mark is counted, and a
// mark in the middle of a file is still a reject that says why.
func TestPowerShellBOM(t *testing.T) {
	w := newWorkspace(t)
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"exchange","session_id":"ps","user":"powershell %d","ai":"ok"}`+"\r\n", i)
	}
	w.appendRaw("ps.jsonl", []byte("\xef\xbb\xbf"+line(1)+line(2)))
	// A second file concatenated from two such files: its second mark
	// is content.
	w.appendRaw("cat.jsonl", []byte("\xef\xbb\xbf"+line(3)+"\xef\xbb\xbf"+line(4)))
	w.startDaemon()
	w.waitExchanges(3, 30*time.Second)
	st := w.status()
	if st.BOMsSkipped != 2 || st.Rejects != 1 {
		t.Errorf("status: %d byte order marks skipped, %d rejects; want 2, 1", st.BOMsSkipped, st.Rejects)
	}
	if !hasReject(w.rejects(), "cat.jsonl", 2, "byte order mark") {
		t.Errorf("the mark in the middle of a file: %+v", w.rejects())
	}
	out, _, _ := w.cli("status")
	if !strings.Contains(out, "byte order marks skipped") {
		t.Errorf("status does not show the marks:\n%s", out)
	}
	if texts := w.searchTexts("bm25", "powershell"); len(texts) != 3 {
		t.Errorf("search: %q", texts)
	}
	// Appended later by Add-Content (no mark on a file that has content).
	w.appendRaw("ps.jsonl", []byte(line(5)))
	w.waitExchanges(4, 30*time.Second)
}

// TestReusedIDs: a producer numbering its events per session ("1", "2",
// ...) reuses ids: the later lines are not indexed (an id names one
// event), but each is listed by rejects with file:line and the line that
// first used the id, and status points at them. An identical line
// appended again (a producer's retry) is a quiet duplicate. Before, only
// a count said "duplicate ids skipped 2".
func TestReusedIDs(t *testing.T) {
	w := newWorkspace(t)
	d := w.startDaemon()
	eventually(t, 30*time.Second, "the daemon answers", func() bool { return w.status().Daemon.Running })
	for _, s := range []string{"a", "b"} {
		for i := 1; i <= 2; i++ {
			w.shellAppend("numbered.jsonl", exchangeLine(s, fmt.Sprint(i), fmt.Sprintf("session %s event %d", s, i), "ok"))
		}
	}
	w.shellAppend("numbered.jsonl", exchangeLine("a", "2", "session a event 2", "ok")) // a's retry: line 2 again
	w.waitExchanges(2, 30*time.Second)
	eventually(t, 30*time.Second, "3 rejects", func() bool { return len(w.rejects()) == 3 })
	rs := w.rejects()
	for _, want := range []struct {
		line   int64
		reason string
	}{
		{3, `id "1" reused with different content: first used at numbered.jsonl:1`},
		{4, `id "2" reused with different content: first used at numbered.jsonl:2`},
		{5, `duplicate of numbered.jsonl:2`},
	} {
		if !hasReject(rs, "numbered.jsonl", want.line, strings.ToLower(want.reason)) {
			t.Errorf("no reject numbered.jsonl:%d %q in %+v", want.line, want.reason, rs)
		}
	}
	st := w.status()
	if st.DuplicatesSkipped != 3 || st.ReusedIDs != 2 {
		t.Errorf("status: %d duplicates, %d reused; want 3, 2", st.DuplicatesSkipped, st.ReusedIDs)
	}
	out, _, _ := w.cli("status")
	if !strings.Contains(out, "ids reused with other content") || !strings.Contains(out, "continuity rejects") {
		t.Errorf("status does not point at the reused ids:\n%s", out)
	}
	// doctor counts the reused ids against the producer, not the replay.
	rep, _ := w.doctor()
	if r := rep["rejects"]; !strings.Contains(r.Message, "2 log lines were rejected") {
		t.Errorf("doctor: %+v", r)
	}
	// The daemon warned of the reused ids, not of the replay.
	eventually(t, 30*time.Second, "the daemon warns of the 2 reused ids", func() bool {
		return strings.Count(d.stderr.String(), `msg="line rejected"`) == 2
	})
	if log := d.stderr.String(); strings.Contains(log, `msg="line rejected" at=numbered.jsonl:5`) || !strings.Contains(log, "line replayed; indexed once") {
		t.Errorf("daemon log:\n%s", log)
	}
}

// TestPrettyPrintedJSON: an event appended as jq writes it without -c
// (one object over several lines) is rejected line by line, each reason
// saying it looks like pretty-printed JSON and how to write it; the
// compact line after it is indexed. Before, `"type": "exchange",` was "a
// JSON string, not an object".
func TestPrettyPrintedJSON(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq on this machine (apt-get install jq)")
	}
	w := newWorkspace(t)
	w.sh(`jq -n '{type:"exchange",session_id:"p",user:"Sessions or JWT?",ai:"sessions",files:["auth.go"]}' >> pretty.jsonl`)
	w.sh(`jq -cn '{type:"exchange",session_id:"p",user:"written compact",ai:"ok"}' >> pretty.jsonl`)
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	if got := w.exchanges(); got != 1 {
		t.Errorf("%d exchanges, want 1 (the compact line)", got)
	}
	rs := w.rejects()
	if len(rs) != 9 {
		t.Errorf("%d rejects, want the 9 lines of the pretty-printed object: %+v", len(rs), rs)
	}
	for _, r := range rs {
		if !strings.Contains(r.Reason, "looks like pretty-printed JSON") || !strings.Contains(r.Reason, "jq -c") {
			t.Errorf("pretty.jsonl:%d: %q", r.Line, r.Reason)
		}
	}
	out, _, _ := w.cli("rejects")
	if !strings.Contains(out, `pretty.jsonl:2: line is not an object: it looks like pretty-printed JSON`) {
		t.Errorf("rejects:\n%s", out)
	}
}
