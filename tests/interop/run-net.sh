#!/usr/bin/env bash
# ACP over the network (issue 27): the official SDKs' network peers against each other and
# against our binary.
#   a. every SDK client against every SDK server, over WebSocket and over Streamable HTTP
#      (POST + SSE): the TypeScript SDK 2.4.0 `experimental/*` peers in ts-http/ and the Rust
#      `agent-client-protocol-http` peers in rust-http/. Each run is one prompt turn that
#      streams a message and asks one permission (`/echo hello` + `/tool edit Fix`), and the
#      Rust client's whole scenario (README.md, "What a client peer checks") per server.
#   b. our server `acp-cli --acp --listen 127.0.0.1:0` under the same SDK clients (with and
#      without `--token-file`), our client `acp-cli client --url URL` against each SDK server,
#      and the stdio SDK clients (Python, TypeScript, Rust) through `acp-cli bridge --connect
#      URL` to our server. Each part prints `skipped: …` (and does not fail) when the binary
#      lacks the flag it needs.
#
# Usage: tests/interop/run-net.sh   (runs setup.sh and builds acp-cli first)
# Prints each run as `ok NAME` or `FAIL NAME` with the client's output and the server's stderr
# tail, then `N passed, M failed`; exits 1 on any failure.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$here/setup.sh" >/dev/null || { echo "setup.sh failed"; exit 1; }
cargo build --quiet -p acp-rs-cli --manifest-path "$root/Cargo.toml" || { echo "building acp-cli failed"; exit 1; }
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" \
    || { echo "cargo metadata failed"; exit 1; }
ours="$target_dir/debug/acp-cli"

work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

declare -A client=(
    [rust]="$here/rust-http/target/debug/net-client"
    [ts]="node $here/ts-http/client.mjs"
)
declare -A server=(
    [rust]="$here/rust-http/target/debug/net-agent"
    [ts]="node $here/ts-http/agent.mjs"
)
declare -A stdio_client=(
    [py]="$here/.venv/bin/python $here/python/client.py"
    [ts]="node $here/ts/client.mjs"
    [rust]="$here/rust/target/debug/peer-client"
)
declare -A url=()
declare -A server_err=()
# A prompt that streams a message, asks one permission and ends the turn, on every server.
prompt=$'/echo hello\n/tool edit Fix'
passed=0
failed=0

# start NAME CMD...: starts a server that prints `listening http://…/acp` first on stdout;
# sets url[NAME] and server_err[NAME] (its stderr file).
start() {
    local name="$1"
    shift
    local out="$work/$name.out" err="$work/$name.err"
    "$@" >"$out" 2>"$err" &
    pids+=($!)
    server_err[$name]="$err"
    for _ in $(seq 1 200); do
        if grep -q '^listening ' "$out" 2>/dev/null; then
            url[$name]="$(sed -n 's/^listening //p' "$out" | head -1)"
            return 0
        fi
        kill -0 "$!" 2>/dev/null || break
        sleep 0.05
    done
    echo "FAIL start $name: no 'listening' line; its stderr:"
    tail -n 20 "$err" | sed 's/^/    /'
    failed=$((failed + 1))
    return 1
}

# as_ws URL: the same endpoint as a WebSocket URL.
as_ws() { sed -e 's#^http://#ws://#' -e 's#^https://#wss://#' <<<"$1"; }

# check NAME SERVER_NAME RC OUTPUT PATTERN...: passes when RC is 0 and every extended regex
# matches OUTPUT (stdout and stderr interleave, so a streamed text and a stderr line can share
# a line); otherwise prints the output and the server's stderr tail.
check() {
    local name="$1" srv="$2" rc="$3" out="$4"
    shift 4
    local why=""
    [ "$rc" -eq 0 ] || why="exit $rc"
    for pattern in "$@"; do
        [ -n "$why" ] && break
        grep -Eq -- "$pattern" <<<"$out" || why="no match for '$pattern'"
    done
    if [ -z "$why" ]; then
        echo "ok $name"
        passed=$((passed + 1))
        return
    fi
    echo "FAIL $name: $why; its output:"
    tail -n 30 <<<"$out" | sed 's/^/    /'
    if [ -n "$srv" ] && [ -n "${server_err[$srv]:-}" ]; then
        echo "  the server's stderr tail:"
        tail -n 20 "${server_err[$srv]}" | sed 's/^/    /'
    fi
    failed=$((failed + 1))
}

# known CLIENT SERVER_NAME TRANSPORT: the error a pair gives because of a known incompatibility
# between the two SDKs (docs/network-interop.md, "Found on the wire"), or nothing.
known() {
    # The Rust client POSTs its answer to a session-scoped agent request (here
    # session/request_permission) without Acp-Session-Id; the TypeScript server requires it.
    if [ "$1" = rust ] && [ "$2" = ts ] && [ "$3" = http ]; then echo 'Missing Acp-Session-Id'; fi
}

# expect_known NAME SERVER_NAME RC OUTPUT PATTERN: a run that must fail with PATTERN; a pass
# fails too, so a fixed SDK shows up here.
expect_known() {
    local name="$1" srv="$2" rc="$3" out="$4" pattern="$5"
    if [ "$rc" -ne 0 ] && grep -Fq -- "$pattern" <<<"$out"; then
        echo "ok $name: fails as known ($pattern)"
        passed=$((passed + 1))
    elif [ "$rc" -eq 0 ]; then
        echo "FAIL $name: passed, but the known incompatibility '$pattern' was expected: update known() in run-net.sh"
        failed=$((failed + 1))
    else
        check "$name" "$srv" "$rc" "$out" "$pattern"
    fi
}

# sdk_clients LABEL SERVER_NAME [CLIENT ARGS...]: every SDK client over both transports, in
# one-prompt mode, then the Rust client's scenario over both transports. A pair with a known
# incompatibility must fail with it, and must pass a turn that avoids it (`/echo hello`).
sdk_clients() {
    local label="$1" srv="$2"
    shift 2
    local c t out rc issue
    for c in rust ts; do
        for t in ws http; do
            issue="$(known "$c" "$srv" "$t")"
            # shellcheck disable=SC2086 # the commands are word lists on purpose
            out="$(cd "$work" && timeout 60 ${client[$c]} --url "${url[$srv]}" --transport "$t" "$@" --prompt "$prompt" 2>&1)"
            rc=$?
            if [ -n "$issue" ]; then
                expect_known "$c SDK client -> $label ($t)" "$srv" "$rc" "$out" "$issue"
                # shellcheck disable=SC2086
                out="$(cd "$work" && timeout 60 ${client[$c]} --url "${url[$srv]}" --transport "$t" "$@" --prompt '/echo hello' 2>&1)"
                rc=$?
                check "$c SDK client -> $label ($t), no permission" "$srv" "$rc" "$out" 'hello' '^stop reason: end_turn$'
                continue
            fi
            check "$c SDK client -> $label ($t)" "$srv" "$rc" "$out" \
                'hello' 'permission: .* -> allow_once$' '^stop reason: end_turn$'
        done
    done
    for t in ws http; do
        issue="$(known rust "$srv" "$t")"
        out="$(cd "$work" && timeout 60 "${client[rust]}" --url "${url[$srv]}" --transport "$t" "$@" 2>&1)"
        rc=$?
        if [ -n "$issue" ]; then
            expect_known "rust SDK client scenario -> $label ($t)" "$srv" "$rc" "$out" "$issue"
        else
            check "rust SDK client scenario -> $label ($t)" "$srv" "$rc" "$out" '^7 passed, 0 failed$'
        fi
    done
}

echo "== a. SDK clients against SDK servers"
for s in rust ts; do
    # shellcheck disable=SC2086
    start "$s" ${server[$s]} && sdk_clients "$s SDK server" "$s"
done

echo "== b. our server, client and bridge"
if ! "$ours" --help 2>&1 | grep -q -- '--listen'; then
    echo "skipped: acp-cli has no --listen"
else
    if start ours "$ours" --acp --listen 127.0.0.1:0; then
        sdk_clients "acp-cli --acp --listen" ours
    fi
    token="$work/token"
    printf 'interop-%s\n' "$RANDOM$RANDOM" >"$token"
    chmod 600 "$token"
    if start ours-token "$ours" --acp --listen 127.0.0.1:0 --token-file "$token"; then
        sdk_clients "acp-cli --acp --listen --token-file" ours-token --token-file "$token"
        # Without the token the turn must fail.
        for c in rust ts; do
            # shellcheck disable=SC2086
            out="$(cd "$work" && timeout 60 ${client[$c]} --url "${url[ours-token]}" --prompt "$prompt" 2>&1)"
            rc=$?
            name="$c SDK client without the token -> acp-cli --token-file (must fail)"
            if [ "$rc" -ne 0 ] && grep -q '^FAIL ' <<<"$out"; then
                echo "ok $name"
                passed=$((passed + 1))
            else
                echo "FAIL $name: exit $rc, the turn was not refused; its output:"
                tail -n 30 <<<"$out" | sed 's/^/    /'
                failed=$((failed + 1))
            fi
        done
    fi
fi

if ! "$ours" client --help 2>&1 | grep -q -- '--url'; then
    echo "skipped: acp-cli client has no --url"
else
    for s in rust ts; do
        [ -n "${url[$s]:-}" ] || continue
        for t in ws http; do
            u="${url[$s]}"
            [ "$t" = ws ] && u="$(as_ws "$u")"
            out="$(cd "$work" && timeout 60 "$ours" client --url "$u" --approve allow --prompt "$prompt" </dev/null 2>&1)"
            rc=$?
            check "acp-cli client --url -> $s SDK server ($t)" "$s" "$rc" "$out" \
                'hello' '^Approved \(once\)$' '^stop reason: end_turn$'
        done
    done
fi

if ! "$ours" bridge --help 2>&1 | grep -q -- '--connect'; then
    echo "skipped: acp-cli has no bridge --connect"
elif [ -z "${url[ours]:-}" ]; then
    echo "skipped: acp-cli bridge --connect needs our server (acp-cli --acp --listen)"
else
    for c in py ts rust; do
        for t in ws http; do
            u="${url[ours]}"
            [ "$t" = ws ] && u="$(as_ws "$u")"
            # shellcheck disable=SC2086
            out="$(cd "$work" && timeout 60 ${stdio_client[$c]} -- "$ours" bridge --connect "$u" 2>&1)"
            rc=$?
            check "$c SDK stdio client -> acp-cli bridge --connect -> acp-cli --listen ($t)" ours "$rc" "$out" \
                '^7 passed, 0 failed$'
        done
    done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
