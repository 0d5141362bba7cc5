#!/usr/bin/env bash
# Builds both agents (only ours for `--only long-turn`) and the benchmark in release mode, then
# runs it. Arguments go to the benchmark (see README.md), e.g.
# `bash benches/e2e/run.sh --rounds 9 --only throughput`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p acp-rs-cli
# acp-cli is run from wherever cargo put it (CARGO_TARGET_DIR may move it); the other two
# are built into their own directories explicitly.
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
# The long-turn run alone drives only our agent.
if [[ " $* " != *" --only long-turn "* ]]; then
    cargo build --quiet --release --manifest-path "$repo/tests/interop/rust/Cargo.toml" --bin peer-agent \
        --target-dir "$repo/tests/interop/rust/target"
fi
cargo build --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$here/target"

exec "$here/target/release/acp-bench-e2e" \
    --ours "$target_dir/release/acp-cli" \
    --official "$repo/tests/interop/rust/target/release/peer-agent" \
    "$@"
