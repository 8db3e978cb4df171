package importer

import (
	"encoding/json"
	"strings"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// maxToolArg caps the argument shown in a tool summary.
const maxToolArg = 160

// summariseTool is a short line for one tool call ("Edit main.go",
// "Bash: go test ./...", "WebSearch: sqlite wal") and the files it reads
// or edits. Arguments are never dumped: the first line of the one that
// says what the call was about, capped.
func summariseTool(name string, input json.RawMessage) (string, []string) {
	var args map[string]any
	_ = json.Unmarshal(input, &args)
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
				return v
			}
		}
		return ""
	}
	var files []string
	for _, k := range []string{"file_path", "path", "notebook_path", "absolute_path", "filePath", "target_file", "dir_path"} {
		if v, ok := args[k].(string); ok && v != "" && k != "dir_path" {
			files = append(files, v)
		}
	}
	if v, ok := args["paths"].([]any); ok {
		for _, p := range v {
			if s, ok := p.(string); ok && s != "" {
				files = append(files, s)
			}
		}
	}
	if patch := str("patch", "input"); strings.Contains(patch, "*** Begin Patch") {
		files = append(files, patchFiles(patch)...)
	}
	name = oneLine(name, 80)
	if name == "" {
		name = "tool"
	}
	arg := ""
	switch {
	case len(files) > 0:
		arg = strings.Join(files, ", ")
	default:
		arg = str("command", "cmd", "query", "pattern", "url", "description", "prompt", "subject", "dir_path", "task_id")
		if arg == "" {
			if v, ok := args["command"].([]any); ok {
				var parts []string
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				arg = strings.Join(parts, " ")
			}
		}
	}
	arg = oneLine(arg, maxToolArg)
	if arg == "" {
		return name, files
	}
	if len(files) > 0 {
		return name + " " + arg, files
	}
	return name + ": " + arg, files
}

var rePatchFile = lazyre.New(`(?m)^\*\*\* (?:Update|Add|Delete) File: (.+)$`)

// patchFiles are the files an apply_patch body touches.
func patchFiles(patch string) []string {
	var out []string
	for _, m := range rePatchFile().FindAllStringSubmatch(patch, 100) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// validID reports whether s can be a protocol session id.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum {
			continue
		}
		if i == 0 {
			return false
		}
		switch c {
		case '.', '_', ':', '@', '+', '-':
			continue
		}
		return false
	}
	return true
}

// sanitizeID turns s into a valid session id: characters outside the set
// become "-", and it is capped.
func sanitizeID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 100; i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch {
		case alnum:
			b.WriteByte(c)
		case b.Len() > 0 && (c == '.' || c == '_' || c == ':' || c == '@' || c == '+' || c == '-'):
			b.WriteByte(c)
		case b.Len() > 0:
			b.WriteByte('-')
		}
	}
	return strings.TrimRight(b.String(), "-")
}
