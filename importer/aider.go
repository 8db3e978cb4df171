package importer

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Aider appends every chat of a project to <project>/.aider.chat.history.md
// (markdown):
//
//	# aider chat started at 2024-08-05 15:10:33
//
//	> aider --model sonnet          (aider's own output, quoted)
//	#### the user's prompt         (each prompt line starts with "#### ")
//
//	the model's answer, as markdown, SEARCH/REPLACE blocks included
//
// Each "# aider chat started at" opens a session, named by its start time
// (2024-08-05T15-10-33; aider writes local time, read in the importing
// machine's zone). "#### " lines are prompts (consecutive ones are one
// prompt), quoted lines are left out (command output, lint, tokens), the
// rest is the answer. The file names the edited files in SEARCH/REPLACE
// blocks (a path line before the fence); those go to files. Prompts are
// told apart by their line, since aider records no per-message time.

const aiderStart = "# aider chat started at "

// ParseAider reads an .aider.chat.history.md.
func ParseAider(r io.Reader, name string, mtime time.Time) Parsed {
	var out Parsed
	br := bufio.NewReaderSize(r, 1<<16)
	var s *Session
	var prompt, answer strings.Builder
	var promptLine, answerLine int
	var files []string
	var prevLine string
	inFence := false
	flushAnswer := func() {
		if s == nil {
			answer.Reset()
			files = nil
			return
		}
		if t := strings.TrimSpace(answer.String()); t != "" || len(files) > 0 {
			s.Items = append(s.Items, Item{Kind: ItemStep, Key: "L" + itoa(answerLine), Line: answerLine, Text: t, Files: files})
		}
		answer.Reset()
		files = nil
	}
	flushPrompt := func() {
		if s != nil && strings.TrimSpace(prompt.String()) != "" {
			s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: "L" + itoa(promptLine), Line: promptLine, Text: strings.TrimSpace(prompt.String()), KeyedTurn: true})
		}
		prompt.Reset()
	}
	closeSession := func() {
		flushPrompt()
		flushAnswer()
		if s != nil {
			if hasConversation(s) {
				s.Items = append(s.Items, Item{Kind: ItemEnd, Key: "end"})
				out.Sessions = append(out.Sessions, s)
			} else {
				out.Skipped++
				out.SkipReasons = append(out.SkipReasons, fmt.Sprintf("%s: session %s: no prompt", name, s.ID))
			}
		}
		s = nil
	}
	for lineNo := 1; ; lineNo++ {
		raw, tooLong, err := readLine(br, maxNativeLine)
		if len(raw) == 0 && err != nil {
			if err != io.EOF {
				out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "read: " + err.Error()})
			}
			break
		}
		if tooLong {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "line too long, skipped"})
			continue
		}
		line := strings.ToValidUTF8(string(raw), "\uFFFD")
		switch {
		case strings.HasPrefix(line, aiderStart):
			closeSession()
			stamp := strings.TrimSpace(strings.TrimPrefix(line, aiderStart))
			t, err := time.ParseInLocation("2006-01-02 15:04:05", stamp, time.Local)
			if err != nil {
				out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: fmt.Sprintf("session start %q is not a time (want YYYY-MM-DD HH:MM:SS); the session is read with the next start", oneLine(stamp, 40))})
				continue
			}
			s = &Session{Agent: Aider, ID: t.Format("2006-01-02T15-04-05"), Source: name, Time: t.UTC()}
			inFence = false
		case s == nil:
			// text before the first session start: not part of a chat
		case strings.HasPrefix(line, "#### ") || line == "####":
			if prompt.Len() == 0 {
				flushAnswer()
				promptLine = lineNo
			}
			prompt.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "####"), " ") + "\n")
			inFence = false
		case strings.HasPrefix(line, "> ") || line == ">":
			flushPrompt() // aider's own output; not part of the answer
		default:
			flushPrompt()
			if answer.Len() == 0 && strings.TrimSpace(line) == "" {
				continue
			}
			if answer.Len() == 0 {
				answerLine = lineNo
			}
			if strings.HasPrefix(line, "```") {
				if !inFence {
					if p := strings.TrimSpace(prevLine); p != "" && !strings.ContainsAny(p, " \t`") && strings.ContainsAny(p, "./") {
						files = append(files, p)
					}
				}
				inFence = !inFence
			}
			answer.WriteString(line + "\n")
		}
		prevLine = line
	}
	closeSession()
	if len(out.Sessions) == 0 && out.Skipped == 0 && len(out.Problems) == 0 {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no aider chat in this file")
	}
	return out
}
