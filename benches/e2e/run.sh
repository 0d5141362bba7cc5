#!/usr/bin/env bash
# Builds both agents (only ours for `--only long-turn`) and the benchmark in release mode, then
# runs it. Arguments go to the benchmark (see README.md), e.g.
# `bash benches/e2e/run.sh --rounds 9 --only throughput`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p acp-cli
# The long-turn run alone drives only our agent.
if [[ " $* " != *" --only long-turn "* ]]; then
    cargo build --quiet --release --manifest-path "$repo/tests/interop/rust/Cargo.toml" --bin peer-agent
fi
cargo build --quiet --release --manifest-path "$here/Cargo.toml"

exec "$here/target/release/acp-bench-e2e" \
    --ours "$repo/target/release/acp-cli" \
    --official "$repo/tests/interop/rust/target/release/peer-agent" \
    "$@"
