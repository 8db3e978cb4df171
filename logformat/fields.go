package logformat

import (
	"fmt"
	"strings"
)

// KnownFields are the top-level fields of protocol version 1, of every
// type (section 4 of protocol.md).
var KnownFields = []string{
	fType, fV, fTimestamp, fSessionID, fID, fFiles, fMetadata,
	fUser, fAI, fReason, fPreviousSession, fNewSession,
}

// fieldAliases are the names other tools and chat APIs give to a field of
// the protocol: a producer that writes them means that field.
var fieldAliases = map[string]string{
	"ts": fTimestamp, "time": fTimestamp, "date": fTimestamp, "datetime": fTimestamp,
	"createdat": fTimestamp, "created": fTimestamp, "at": fTimestamp,
	"session": fSessionID, "sid": fSessionID, "conversationid": fSessionID,
	"conversation": fSessionID, "threadid": fSessionID, "chatid": fSessionID,
	"prompt": fUser, "question": fUser, "input": fUser, "human": fUser, "query": fUser,
	"usermessage": fUser, "request": fUser,
	"answer": fAI, "response": fAI, "reply": fAI, "output": fAI, "completion": fAI,
	"assistantmessage": fAI, "bot": fAI,
	"previous": fPreviousSession, "prevsession": fPreviousSession, "fromsession": fPreviousSession,
	"oldsession": fPreviousSession, "next": fNewSession, "nextsession": fNewSession,
	"tosession": fNewSession,
}

// LooksLikeKnownField returns the protocol field that name, a field the
// protocol does not define, most likely stands for, or "": the same
// field in another spelling ("sessionId", "session-id", "Timestamp"), a
// typo of one (one edit away, two from a name of 10 or more characters:
// "timestmap", "sesion_id"), or a common other name for it ("ts",
// "session", "prompt", "response"). Unknown fields are kept, not rejected
// (forward compatibility): this only names the likely mistake, for status
// and `continuity log`.
func LooksLikeKnownField(name string) string {
	for _, k := range KnownFields {
		if name == k {
			return ""
		}
	}
	bare := bareName(name)
	if k, ok := fieldAliases[bare]; ok {
		return k
	}
	for _, k := range KnownFields {
		kb := bareName(k)
		if bare == kb || len(kb) >= 5 && editDistance(bare, kb, maxTypo(k)) <= maxTypo(k) {
			return k
		}
	}
	return ""
}

// bareName is name in lower case without '_', '-' and spaces.
func bareName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		return r
	}, strings.ToLower(name))
}

// FieldHints is "; \"ts\" looks like \"timestamp\", ..." for the names of
// unknown fields that look like a field of the protocol, or "".
func FieldHints(names []string) string {
	var b strings.Builder
	for _, n := range names {
		if k := LooksLikeKnownField(n); k != "" {
			fmt.Fprintf(&b, "; %q looks like %q", n, k)
		}
	}
	return b.String()
}
