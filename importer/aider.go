package importer

import (
	"io"
	"time"
)

// ParseAider reads an .aider.chat.history.md.
func ParseAider(r io.Reader, name string, mtime time.Time) Parsed {
	return Parsed{}
}
