package index

import "github.com/praxis-os/continuity/redact"

// redactorLater compiles the default redaction rules (redact.FromEnv) on
// another goroutine and delivers them on the channel returned. Compiling
// their regular expressions takes a few tens of milliseconds of CPU,
// about as long as opening the database files and checking the schema:
// the writer's Open does both at once and takes the rules before the
// first thing it redacts (redactStored), instead of one after the other
// on every start of the daemon, ingest or a command that writes. A
// read-only Open (the commands that read next to a daemon) needs no
// rules and compiles none.
func redactorLater() chan *redact.Redactor {
	ch := make(chan *redact.Redactor, 1)
	go func() { ch <- redact.FromEnv() }()
	return ch
}
