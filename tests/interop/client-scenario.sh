#!/usr/bin/env bash
# Our client (`acp-cli client`) through the client peers' scenario (README.md, "What a
# client peer checks") against one agent: a permission allowed and rejected, ask_user, a
# file read served by our client, and a cancel. Every run does initialize and session/new.
#
# Usage: client-scenario.sh ACP_CLI AGENT [ARGS...]
# Prints `ok <step>` or `FAIL <step>: <output>` per step, then `N passed, M failed`;
# exits 1 on any failure.
set -uo pipefail

ours="$1"
shift
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
dir="$(cd "$dir" && pwd -P)"
printf 'hello there, a file with no numbers.\n' >"$dir/hello.txt"
passed=0
failed=0

# step NAME OUTPUT PATTERN...: every extended regex must match OUTPUT.
step() {
    local name="$1" out="$2"
    shift 2
    for pattern in "$@"; do
        if ! grep -Eq -- "$pattern" <<<"$out"; then
            echo "FAIL $name: no match for '$pattern' in:"
            sed 's/^/    /' <<<"$out"
            failed=$((failed + 1))
            return
        fi
    done
    echo "ok $name"
    passed=$((passed + 1))
}

client() { timeout 30 "$ours" client --cwd "$dir" "$@" 2>&1; }

out="$(client --approve allow --prompt '/tool edit Fix' -- "$@" </dev/null)"
step "tool allow_once" "$out" '^Approved \(once\)$' '— completed$' '^stop reason: end_turn$'

out="$(client --approve reject --prompt '/tool edit Fix' -- "$@" </dev/null)"
step "tool reject_once" "$out" '^Rejected \(once\)$' '— failed$' '^stop reason: end_turn$'

out="$(printf 'Ada\n' | client --approve ask --prompt '/ask Your name?' -- "$@")"
step "ask" "$out" '^  Your name\?$' 'Ada' '^stop reason: end_turn$'

out="$(client --prompt "/read $dir/hello.txt" -- "$@" </dev/null)"
# The SDK peers say `read N bytes …` in a message; our demo agent says `Read N bytes …` in the
# read tool call's content. Either way the count proves our client served the file.
step "read" "$out" "(^|\\s)[Rr]ead 37 bytes from $dir/hello.txt\$" '^stop reason: end_turn$'

log="$dir/cancel.log"
# Not under timeout(1): it would pass the SIGINT on twice (to the child and its group),
# which is Ctrl-C pressed twice.
"$ours" client --cwd "$dir" --prompt '/sleep 10000' -- "$@" </dev/null >"$log" 2>&1 &
pid=$!
(sleep 30 && kill -KILL "$pid" 2>/dev/null) &
watchdog=$!
for _ in $(seq 1 600); do
    grep -q '^Sending to ' "$log" && break
    sleep 0.05
done
kill -INT "$pid"
wait "$pid"
rc=$?
kill "$watchdog" 2>/dev/null
step "cancel" "$(cat "$log"; echo "exit $rc")" '^stop reason: cancelled$' '^exit 130$'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
