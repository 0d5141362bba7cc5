#!/usr/bin/env bash
# ACP over the network, measured (issue 27 item 6): notifications per second and prompt
# round-trip latency over WebSocket and over Streamable HTTP (SSE) on loopback, server memory
# with 100 idle connections, and with one stalled SSE reader during a 1,000,000 chunk flood.
# Every server is measured by the same client, `net-bench` (tests/interop/rust-http, on the
# official `agent-client-protocol-http` crate), each mode against a freshly started server:
#   ours  `acp-cli --acp --listen 127.0.0.1:0` (demo backend; release build)
#   rust  `net-agent --tcp-nodelay`, the Rust `agent-client-protocol-http` server with the same
#         /flood logic, with TCP_NODELAY on its sockets
#   rust-nagle  the same without TCP_NODELAY, as the crate documents `axum::serve`
#   ts    `ts-http/agent.mjs`, the TypeScript SDK 2.4.0 server with the same /flood logic
#
# Usage: bash benches/net/run.sh [--servers "ours rust ts"] [--debug] [NET-BENCH FLAGS...]
#   default servers: ours (when acp-cli has --listen) and rust. Each mode gets a fresh server,
#   `idle` one per transport. NET-BENCH FLAGS go to every
#   net-bench run (--count, --turns, --connections, --stall-count, --stall-seconds,
#   --transport); see the top of tests/interop/rust-http/src/bin/bench.rs.
# Prints the load average, then one line per figure prefixed with the server's name.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
peers="$root/tests/interop/rust-http"
profile=release
servers=""
while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers="$2"; shift 2 ;;
        --debug) profile=debug; shift ;;
        *) break ;;
    esac
done
flag=(); [ "$profile" = release ] && flag=(--release)

cargo build --quiet "${flag[@]}" --manifest-path "$peers/Cargo.toml" --target-dir "$peers/target"
# acp-cli only when it may be measured.
if [ -z "$servers" ] || [[ " $servers " == *" ours "* ]]; then
    cargo build --quiet "${flag[@]}" -p acp-rs-cli --manifest-path "$root/Cargo.toml"
fi
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
ours="$target_dir/$profile/acp-cli"
bench="$peers/target/$profile/net-bench"
if [ -z "$servers" ]; then
    servers="rust"
    if "$ours" --help 2>&1 | grep -q -- '--listen'; then
        servers="ours rust"
    else
        echo "skipped: acp-cli has no --listen (measuring the SDK server only)"
    fi
fi

work="$(mktemp -d)"
pid=""
stop() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    pid=""
}
trap 'stop; rm -rf "$work"' EXIT

# serve NAME: starts a fresh server NAME; sets pid and url.
serve() {
    case "$1" in
        # In the scratch directory: the agent saves its sessions and log in its cwd.
        ours) (cd "$work" && exec "$ours" --acp --listen 127.0.0.1:0 >"$work/out" 2>"$work/err") & ;;
        rust) "$peers/target/$profile/net-agent" --tcp-nodelay >"$work/out" 2>"$work/err" & ;;
        rust-nagle) "$peers/target/$profile/net-agent" >"$work/out" 2>"$work/err" & ;;
        ts)
            [ -d "$root/tests/interop/ts-http/node_modules/ws" ] \
                || (cd "$root/tests/interop/ts-http" && npm ci --no-audit --no-fund --loglevel=error)
            node "$root/tests/interop/ts-http/agent.mjs" >"$work/out" 2>"$work/err" &
            ;;
        *) echo "unknown server $1 (ours, rust, rust-nagle, ts)"; exit 2 ;;
    esac
    pid=$!
    for _ in $(seq 1 200); do
        url="$(sed -n 's/^listening //p' "$work/out" | head -1)"
        [ -n "$url" ] && return 0
        sleep 0.05
    done
    echo "$1: the server printed no 'listening' line; its stderr:"
    tail -n 20 "$work/err"
    exit 1
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores); profile $profile"
for name in $servers; do
    for mode in "--only rate" "--only latency" "--only idle --transport ws" \
        "--only idle --transport http" "--only stalled"; do
        serve "$name"
        # shellcheck disable=SC2086 # the mode is a word list on purpose
        "$bench" --url "$url" --server-pid "$pid" $mode "$@" | sed "s/^/$name /"
        stop
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
