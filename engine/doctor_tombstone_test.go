package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/workspace"
)

// TestDoctorBrokenTombstones: a line of another machine's .forgotten file
// that is not a forget (a merge marker) stops the daemon and 'forget';
// doctor said nothing of it and told to start the daemon.
func TestDoctorBrokenTombstones(t *testing.T) {
	ws := workspace.At(t.TempDir())
	if err := os.MkdirAll(ws.Logs, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws.Logs, ".forgotten.desktop")
	good := `{"session":"s1","forgotten_at":"2026-11-29T04:58:38Z"}` + "\n"
	for _, tc := range []struct {
		data string
		fail bool
	}{
		{data: good},
		{data: good + "<<<<<<< HEAD\n", fail: true},
	} {
		if err := os.WriteFile(file, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		d := &doctor{ws: ws}
		d.checkTombstones()
		var got []Check
		for _, c := range d.r.Checks {
			if c.Name == "forgotten sessions" {
				got = append(got, c)
			}
		}
		if !tc.fail {
			if len(got) != 0 {
				t.Errorf("doctor on readable forgets: %+v", got)
			}
			continue
		}
		if len(got) != 1 || got[0].Status != StatusFail || !strings.Contains(got[0].Message, ".forgotten.desktop:2") || !strings.Contains(got[0].Fix, "no daemon starts") {
			t.Errorf("doctor on a broken line of .forgotten.desktop: %+v", got)
		}
	}
}
