#!/usr/bin/env bash
# Builds the in-process echo-agent benchmark (release, its own workspace and target directory)
# and runs it. Arguments go to the benchmark (see benches/README.md, "acp-async against the
# official SDK"), e.g. `bash benches/async/run.sh --quick` or `... --rounds 9`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

cargo build --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$here/target"
exec "$here/target/release/acp-bench-async" "$@"
