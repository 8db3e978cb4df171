package main

import (
	"fmt"
	"strings"

	"github.com/praxis-os/continuity/internal/synth"
)

// Texts of the query workspace's exchanges (--text).
const (
	textLongMemEval = "longmemeval"
	textCoding      = "coding"
)

// queryText is the --text of the query command.
var queryText = textLongMemEval

// codingExchange is a coding agent's exchange of about 0.9 KB as a line: a
// question of 60-240 bytes naming a file, an answer of 300-1,100 bytes of
// prose with a code block (tabs, newlines, quotes, "<", "&": the characters
// producers escape differently).
func codingExchange(gen *synth.Text, i int) (user, ai string) {
	r := gen.Rand()
	file := fmt.Sprintf("internal/pkg%d/file%d.go", i%23, i%41)
	user = fmt.Sprintf("In %s, %s", file, gen.Text(60+r.IntN(180)))
	var b strings.Builder
	b.WriteString(gen.Text(120 + r.IntN(400)))
	b.WriteString("\n\n```go\nfunc (s *Server) handle")
	fmt.Fprintf(&b, "%d(ctx context.Context, req *Request) (*Response, error) {\n", i%97)
	fmt.Fprintf(&b, "\tif req.N < %d && req.Name != \"\" {\n\t\treturn nil, fmt.Errorf(\"%%s: bad & short\", req.Name)\n\t}\n", i%13)
	b.WriteString("\treturn &Response{OK: true}, nil\n}\n```\n\n")
	b.WriteString(gen.Text(60 + r.IntN(300)))
	return user, b.String()
}
