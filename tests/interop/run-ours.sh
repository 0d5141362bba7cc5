#!/usr/bin/env bash
# Interop tests of our own binary against peers built on the official SDKs:
#   1. our agent (`acp-cli --acp --stdio`) driven by the Python, TypeScript and Rust SDK clients;
#   2. our client (`acp-cli client`) driving the Python, TypeScript and Rust SDK agents;
#   3. the acp-async example agents (`echo_agent_tokio`, `echo_agent_smol`, `tool_agent`)
#      under each SDK client's one-prompt mode, to `end_turn`.
# Each client peer runs the scenario of tests/interop/README.md and prints `7 passed, 0 failed`.
#
# Usage: tests/interop/run-ours.sh   (runs setup.sh and builds acp-cli first)
# Prints every run's lines prefixed with the pair, then `N passed, M failed`; exits 1 on failure.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$here/setup.sh" >/dev/null || { echo "setup.sh failed"; exit 1; }
cargo build --quiet -p acp-rs-cli --manifest-path "$root/Cargo.toml" || { echo "building acp-cli failed"; exit 1; }
cargo build --quiet -p acp-async --all-features --examples --manifest-path "$root/Cargo.toml" \
    || { echo "building the acp-async examples failed"; exit 1; }
# Where cargo put it: CARGO_TARGET_DIR (or a cargo config) may move the target directory.
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" \
    || { echo "cargo metadata failed"; exit 1; }
ours="$target_dir/debug/acp-cli"

declare -A client=(
    [py]="$here/.venv/bin/python $here/python/client.py"
    [ts]="node $here/ts/client.mjs"
    [rust]="$here/rust/target/debug/peer-client"
)
order=(py ts rust)
passed=0
failed=0

prefix() { while IFS= read -r line; do echo "[$1] $line"; done; }

# 1. Our agent under each official client.
for c in "${order[@]}"; do
    pair="$c SDK client -> acp-cli --acp --stdio"
    # shellcheck disable=SC2086 # the commands are word lists on purpose
    out="$(timeout 60 ${client[$c]} -- "$ours" --acp --stdio 2>&1)"
    rc=$?
    echo "$out" | prefix "$pair"
    if [ $rc -eq 0 ] && echo "$out" | grep -qx '7 passed, 0 failed'; then
        passed=$((passed + 1))
    else
        echo "[$pair] FAILED (exit $rc)"
        failed=$((failed + 1))
    fi
done

# 2. Our client driving each official agent: see client-scenario.sh (added with `acp-cli client`).
if [ -x "$here/client-scenario.sh" ]; then
    declare -A agent=(
        [py]="$here/.venv/bin/python $here/python/agent.py"
        [ts]="node $here/ts/agent.mjs"
        [rust]="$here/rust/target/debug/peer-agent"
    )
    for a in "${order[@]}" ours; do
        if [ "$a" = ours ]; then cmd="$ours --acp --stdio"; else cmd="${agent[$a]}"; fi
        pair="acp-cli client -> $a agent"
        # shellcheck disable=SC2086
        out="$(timeout 90 "$here/client-scenario.sh" "$ours" $cmd 2>&1)"
        rc=$?
        echo "$out" | prefix "$pair"
        if [ $rc -eq 0 ]; then
            passed=$((passed + 1))
        else
            echo "[$pair] FAILED (exit $rc)"
            failed=$((failed + 1))
        fi
    done
fi

# 3. The acp-async examples under each official client (README "An agent in 40 lines"): the
# echo agents must stream `echo: hello` back, tool_agent's permission is answered allow_once.
for example in echo_agent_tokio echo_agent_smol tool_agent; do
    for c in "${order[@]}"; do
        pair="$c SDK client -> acp-async $example"
        # shellcheck disable=SC2086
        out="$(cd "$(mktemp -d)" && timeout 60 ${client[$c]} --prompt hello -- "$target_dir/debug/examples/$example" 2>&1)"
        rc=$?
        echo "$out" | prefix "$pair"
        if [ $rc -eq 0 ] && echo "$out" | grep -qx 'stop reason: end_turn' \
            && { [ "$example" = tool_agent ] || echo "$out" | grep -q 'echo: hello'; }; then
            passed=$((passed + 1))
        else
            echo "[$pair] FAILED (exit $rc)"
            failed=$((failed + 1))
        fi
    done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
