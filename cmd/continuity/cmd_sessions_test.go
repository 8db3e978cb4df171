package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/engine"
)

func TestSessionsCommand(t *testing.T) {
	root, _ := resumeWorkspace(t)
	out, errs, code := runCLI(t, "", "--root", root, "sessions", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Sessions []engine.SessionRow `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got.Sessions {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"alone", "old", "new"}) {
		t.Fatalf("sessions %v", ids)
	}
	old, nw := got.Sessions[1], got.Sessions[2]
	if old.Exchanges != 3 || old.Resets != 1 || !slices.Equal(old.ResumedBy, []string{"new"}) || len(old.Resumes) != 0 ||
		old.First.Format("15:04") != "10:00" || old.Last.Format("15:04") != "11:10" {
		t.Errorf("old = %+v", old)
	}
	if nw.Exchanges != 2 || nw.Resets != 1 || !slices.Equal(nw.Resumes, []string{"old"}) {
		t.Errorf("new = %+v", nw)
	}

	out, _, code = runCLI(t, "", "--root", root, "sessions")
	if code != 0 || !strings.Contains(out, "SESSION") || !strings.Contains(out, "new") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "sessions", "extra"); code != 2 {
		t.Errorf("stray argument: exit %d %s", code, errs)
	}
}
