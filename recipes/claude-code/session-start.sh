#!/usr/bin/env bash
# continuity SessionStart hook for Claude Code.
#
# Prints the resume context of the workspace's most recent session
# (`continuity resume --latest --include-current`), which Claude Code adds to
# the new session's context, and the session id to log under.
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
if [ ! -t 0 ]; then
	input=""
	IFS= read -r -d '' -t 0.3 input 2>/dev/null || true
	re='"session_id"[[:space:]]*:[[:space:]]*"([A-Za-z0-9._:@+-]{1,128})"'
	if [[ $input =~ $re ]]; then
		sid="${BASH_REMATCH[1]}"
	fi
fi

out=$(mktemp "${TMPDIR:-/tmp}/continuity-hook.XXXXXX" 2>/dev/null) || exit 0
trap 'rm -f "$out"' EXIT

"$bin" resume --latest --include-current --budget "$budget" >"$out" 2>/dev/null </dev/null &
pid=$!
# Watchdog: kill the query if it outlives the limit (1 s if this sleep does
# not take the limit given). Its streams are /dev/null so that nothing keeps
# Claude Code's pipe open after the hook exits.
(sleep "$limit" || sleep 1; kill -KILL "$pid") >/dev/null 2>&1 </dev/null &
dog=$!
if wait "$pid" 2>/dev/null; then rc=0; else rc=$?; fi
kill "$dog" >/dev/null 2>&1

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
