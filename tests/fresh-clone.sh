#!/usr/bin/env bash
# A fresh clone with nothing beside it passes `cargo test -p acp-core`: clones this repository's
# HEAD into an empty temporary directory (so no sibling directory of the repository is there) and
# runs the core's tests in it. Builds go to `fresh-clone/` under CARGO_TARGET_DIR (or under
# this repository's target/), so other builds are left alone and a second run is quick.
#
#     bash tests/fresh-clone.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$target"
target=$(cd "$target" && pwd)/fresh-clone

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q --no-hardlinks "$repo" "$scratch/clone"
git -C "$scratch/clone" checkout -q "$(git -C "$repo" rev-parse HEAD)"
echo "fresh clone of $(git -C "$repo" rev-parse --short HEAD) in $scratch/clone (nothing beside it)"
cd "$scratch/clone"
CARGO_TARGET_DIR=$target cargo test -p acp-core
