#!/usr/bin/env bash
# Self-check of the SDK peers: every client peer (Python, TypeScript, Rust)
# against every agent peer, plus one fault run per client that must fail.
# Our own acp-cli interop tests come later; this proves the peers are sound.
#
# Usage: tests/interop/run-peers.sh        (runs setup.sh first; it is idempotent)
# Prints each peer's lines prefixed with the pair, then `N passed, M failed`
# counting pairs; exits 1 if any pair failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/setup.sh" >/dev/null || { echo "setup.sh failed"; exit 1; }

declare -A client=(
    [py]="$here/.venv/bin/python $here/python/client.py"
    [ts]="node $here/ts/client.mjs"
    [rust]="$here/rust/target/debug/peer-client"
)
declare -A agent=(
    [py]="$here/.venv/bin/python $here/python/agent.py"
    [ts]="node $here/ts/agent.mjs"
    [rust]="$here/rust/target/debug/peer-agent"
)
order=(py ts rust)
passed=0
failed=0

prefix() { while IFS= read -r line; do echo "[$1] $line"; done; }

for c in "${order[@]}"; do
    for a in "${order[@]}"; do
        pair="$c client -> $a agent"
        # shellcheck disable=SC2086 # the commands are word lists on purpose
        out="$(timeout 60 ${client[$c]} -- ${agent[$a]} 2>&1)"
        rc=$?
        echo "$out" | prefix "$pair"
        if [ $rc -eq 0 ] && echo "$out" | grep -qx '7 passed, 0 failed'; then
            passed=$((passed + 1))
        else
            echo "[$pair] pair FAILED (exit $rc)"
            failed=$((failed + 1))
        fi
    done
done

# Fault runs: an agent that fails allowed tools must make every client fail
# at the `tool allow_once` step, so the clients' assertions are live. Each
# client meets a different agent, so every agent's fault switch is used too.
for i in "${!order[@]}"; do
    c=${order[$i]}
    a=${order[$(( (i + 1) % ${#order[@]} ))]}
    pair="$c client -> $a agent (PEER_AGENT_FAULT=deny, must fail)"
    # shellcheck disable=SC2086
    out="$(PEER_AGENT_FAULT=deny timeout 60 ${client[$c]} -- ${agent[$a]} 2>&1)"
    rc=$?
    echo "$out" | prefix "$pair"
    if [ $rc -eq 1 ] && echo "$out" | grep -q '^FAIL tool allow_once: '; then
        passed=$((passed + 1))
    else
        echo "[$pair] the client did not report the fault (exit $rc)"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
