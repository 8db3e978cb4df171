package importer

import "errors"

// ParseCursor reads a Cursor state.vscdb.
func ParseCursor(path string) (Parsed, error) {
	return Parsed{}, errors.New("cursor: not yet")
}
