#!/usr/bin/env bash
# Builds the release `acp-cli` and packs it as the ACP registry's `binary` distribution
# expects: one `.tar.gz` per platform with the executable at its top level, and an
# `agent.json` entry beside it (the registry's FORMAT.md and agent.schema.json).
#
# Usage: bash scripts/release.sh OUTDIR
# ACP_RELEASE_PROFILE=NAME builds with another cargo profile (CI packs the `dev` build it
# already has: the packing is what it checks, and an optimised build takes minutes).
# Writes OUTDIR/acp-cli-VERSION-PLATFORM.tar.gz, its .sha256 and OUTDIR/agent.json, and prints
# the archive's sha256. Honours CARGO_TARGET_DIR (and a cargo config's target-dir). Only this machine's platform is built;
# run it on each platform to be listed (the entries merge by platform key).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: bash scripts/release.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."

repository="https://github.com/acp-rs/acp"
# The entry launches the LLM backend: the agent an editor's user wants from a registry.
args='["--acp", "--stdio", "--backend", "llm"]'

case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "release.sh: unsupported OS '$(uname -s)' (the registry lists darwin, linux, windows)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) echo "release.sh: unsupported CPU '$(uname -m)' (the registry lists x86_64 and aarch64)" >&2; exit 1 ;;
esac
platform="$os-$arch"

profile=${ACP_RELEASE_PROFILE:-release}
cargo build --profile "$profile" --quiet -p acp-rs-cli --bin acp-cli
# Where cargo put it: CARGO_TARGET_DIR, a cargo config's target-dir or the default.
target_dir=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# cargo's `dev` profile builds into debug/; every other profile into a directory of its name.
[ "$profile" = dev ] && profile_dir=debug || profile_dir=$profile
bin="$target_dir/$profile_dir/acp-cli"
# The version is the built binary's own (`acp-cli 0.1.0`), so entry and archive cannot disagree.
version=$("$bin" --version | awk '{ print $2 }')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "release.sh: '$bin --version' gave no version" >&2; exit 1; }

archive="acp-cli-$version-$platform.tar.gz"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$bin" "$stage/acp-cli"
cp LICENSE-MIT LICENSE-APACHE "$stage/"
cp acp-cli/README.md "$stage/README.md"
# Reproducible where GNU tar is at hand: sorted names, no owners, a fixed time, no gzip name.
if tar --version 2>/dev/null | grep -q GNU; then
    tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime=@0)
else
    tar_flags=()
fi
tar ${tar_flags[@]+"${tar_flags[@]}"} -C "$stage" -cf - acp-cli LICENSE-MIT LICENSE-APACHE README.md | gzip -n -9 > "$out/$archive"

if command -v sha256sum >/dev/null 2>&1; then
    sha=$(sha256sum "$out/$archive" | awk '{ print $1 }')
else
    sha=$(shasum -a 256 "$out/$archive" | awk '{ print $1 }')
fi
printf '%s  %s\n' "$sha" "$archive" > "$out/$archive.sha256"

cat > "$out/agent.json" <<JSON
{
  "id": "acp-rs",
  "name": "acp-rs",
  "version": "$version",
  "description": "A coding agent on any OpenAI-compatible model (OpenAI, Ollama, llama.cpp), built on a no_std sans-IO ACP core",
  "repository": "$repository",
  "authors": ["the acp-rs contributors"],
  "license": "MIT OR Apache-2.0",
  "distribution": {
    "binary": {
      "$platform": {
        "archive": "$repository/releases/download/v$version/$archive",
        "sha256": "$sha",
        "cmd": "./acp-cli",
        "args": $args
      }
    }
  }
}
JSON

echo "$sha  $out/$archive"
echo "wrote $out/agent.json"
