package importer

import (
	"os"
	"testing"

	"github.com/praxis-os/continuity/logformat"
)

// TestMain fixes the machine's name, which the logs the store writes
// carry (<agent>-<session>~m1.jsonl).
func TestMain(m *testing.M) {
	os.Setenv(logformat.MachineEnv, "m1")
	os.Exit(m.Run())
}
