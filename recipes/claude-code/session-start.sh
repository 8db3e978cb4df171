#!/usr/bin/env bash
# continuity SessionStart hook for Claude Code.
#
# Records the session's chain links, then prints the resume context, which
# Claude Code adds to the new session's context, and the session id to log
# under. By the hook input's "source":
#   startup  prints the workspace's most recent session in full
#            (`continuity resume --latest --include-current`); records nothing
#            (a fresh start is not necessarily a continuation);
#   clear    records session_resume (previous -> this session), prints as startup;
#   compact  records context_reset for this session, prints this session's past
#            (`continuity resume --session <id> --include-current`);
#   resume   records session_resume (previous -> this session) when the id
#            changed; prints nothing (Claude Code restores the conversation).
# The previous session is the most recently written other session transcript
# in this session's transcript folder (~/.claude/projects/<project>/). Events
# go to .praxis-os/.conversations/claude-code-<session>~<machine>.jsonl with the ids
# `continuity import --from claude-code` gives the same events, so importing
# the transcripts as well never doubles them.
#
# FAIL-OPEN: whatever goes wrong (no continuity binary, no index yet, a stuck
# daemon, a slow disk), it prints nothing and exits 0 within
# CONTINUITY_HOOK_TIMEOUT seconds, so it can never break or stall the start
# of a session. Portable bash (Linux, macOS bash 3.2); no coreutils timeout
# needed.
#
# Settings (environment):
#   CONTINUITY_BIN            the binary (default: continuity on PATH)
#   CONTINUITY_HOOK_BUDGET    most tokens of the context printed (default 2000)
#   CONTINUITY_HOOK_TIMEOUT   seconds before giving up (default 1)

bin="${CONTINUITY_BIN:-continuity}"
budget="${CONTINUITY_HOOK_BUDGET:-2000}"
limit="${CONTINUITY_HOOK_TIMEOUT:-1}"

command -v "$bin" >/dev/null 2>&1 || exit 0
# Claude Code runs hooks in the project folder and names it here; continuity
# finds the workspace from there (the nearest ancestor holding .praxis-os).
if [ -n "${CLAUDE_PROJECT_DIR:-}" ]; then
	cd "$CLAUDE_PROJECT_DIR" 2>/dev/null || exit 0
fi

# The hook's input (JSON on stdin) names this session; read it without ever
# waiting on a stdin that stays open.
sid=""
source=""
transcript=""
if [ ! -t 0 ]; then
	input=""
	IFS= read -r -d '' -t 0.3 input 2>/dev/null || true
	re='"session_id"[[:space:]]*:[[:space:]]*"([A-Za-z0-9._:@+-]{1,128})"'
	if [[ $input =~ $re ]]; then
		sid="${BASH_REMATCH[1]}"
	fi
	re='"source"[[:space:]]*:[[:space:]]*"([a-z]{1,32})"'
	if [[ $input =~ $re ]]; then
		source="${BASH_REMATCH[1]}"
	fi
	re='"transcript_path"[[:space:]]*:[[:space:]]*"([^"\\]+)"'
	if [[ $input =~ $re ]]; then
		transcript="${BASH_REMATCH[1]}"
	fi
fi

out=$(mktemp "${TMPDIR:-/tmp}/continuity-hook.XXXXXX" 2>/dev/null) || exit 0
trap 'rm -f "$out"' EXIT

# bounded CMD...: runs the continuity binary with stdout to $out, killed if
# it outlives the limit (1 s if this sleep does not take the limit given);
# sets rc. The watchdog's streams are /dev/null so that nothing keeps Claude
# Code's pipe open after the hook exits.
bounded() {
	"$bin" "$@" >"$out" 2>/dev/null </dev/null &
	pid=$!
	(sleep "$limit" || sleep 1; kill -KILL "$pid") >/dev/null 2>&1 </dev/null &
	dog=$!
	if wait "$pid" 2>/dev/null; then rc=0; else rc=$?; fi
	kill "$dog" >/dev/null 2>&1
}

# previous_session: the most recently written other session transcript
# beside this one (main sessions only: <uuid>.jsonl, not agent-*.jsonl).
previous_session() {
	[ -n "$transcript" ] || return 0
	dir=$(dirname "$transcript" 2>/dev/null) || return 0
	[ -d "$dir" ] || return 0
	for f in $(ls -t "$dir" 2>/dev/null); do
		case "$f" in
		agent-*) continue ;;
		*.jsonl) ;;
		*) continue ;;
		esac
		p="${f%.jsonl}"
		if [ "$p" != "$sid" ] && [[ $p =~ ^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$ ]]; then
			printf '%s' "$p"
			return 0
		fi
	done
}

to="claude-code-$sid.jsonl"
if [ -n "$sid" ]; then
	case "$source" in
	compact)
		# the id continuity import gives the same reset: claude-code:reset:<session>:<uuid of the compact_boundary record>
		id=""
		if [ -f "$transcript" ]; then
			line=$(tail -c 4000000 "$transcript" 2>/dev/null | grep '"compact_boundary"' 2>/dev/null | tail -n 1)
			re='"uuid"[[:space:]]*:[[:space:]]*"([A-Za-z0-9-]{1,64})"'
			if [[ $line =~ $re ]]; then
				id="claude-code:reset:$sid:${BASH_REMATCH[1]}"
			fi
		fi
		bounded log --to "$to" --session "$sid" --type context_reset --reason "context compacted (Claude Code)" ${id:+--id "$id"}
		;;
	resume | clear)
		prev=$(previous_session)
		if [ -n "$prev" ]; then
			bounded log --to "$to" --type session_resume --previous "$prev" --new "$sid" --id "claude-code:resume:$prev:$sid"
		fi
		;;
	esac
fi

case "$source" in
resume) exit 0 ;; # Claude Code restores the conversation itself
compact)
	bounded resume --session "$sid" --include-current --budget "$budget"
	# not indexed yet (a session that never logged): the latest session
	[ "$rc" -eq 0 ] || bounded resume --latest --include-current --budget "$budget"
	;;
*) bounded resume --latest --include-current --budget "$budget" ;;
esac

[ "$rc" -eq 0 ] || exit 0
pack=""
IFS= read -r -d '' pack <"$out" 2>/dev/null
# Nothing printed, or a pack that only says there is nothing to resume: not
# worth the context.
case "$pack" in
"" | "Nothing to resume"* | *"
Nothing to resume"*) exit 0 ;;
esac

printf '%s\n\n' "Context from earlier sessions in this workspace (continuity; 'continuity resume --help', or the continuity MCP tools, give more):"
printf '%s' "$pack"
if [ -n "$sid" ]; then
	printf '\n%s\n' "Log this session's exchanges with session id: $sid"
fi
exit 0
