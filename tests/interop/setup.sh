#!/usr/bin/env bash
# Installs the official ACP SDKs locally (nothing global) and builds the peers:
#   tests/interop/.venv              Python SDK `agent-client-protocol` (pinned)
#   tests/interop/ts/node_modules    TypeScript SDK `@agentclientprotocol/sdk` (package-lock.json)
#   tests/interop/rust/target        Rust SDK `agent-client-protocol` peers (version pinned with =),
#                                    always there: an exported CARGO_TARGET_DIR does not move them
#   tests/interop/ts-http/node_modules  the TypeScript SDK again with `ws`, for the network peers
#                                    (package-lock.json)
#   tests/interop/rust-http/target   network peers and net-bench on the Rust crate
#                                    `agent-client-protocol-http` (versions pinned with =)
#   tests/interop/mcp/node_modules   published MCP servers (everything, filesystem; package-lock.json)
#                                    and the Python MCP SDK `mcp` in .venv (mcp/requirements.txt),
#                                    for the agent's MCP client tests (acp-cli/tests/mcp_published.rs)
# Needs python3 (>= 3.10, with venv), node (>= 20) + npm, and cargo on PATH.
# Safe to run again: it only reinstalls what is missing or stale.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

need() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "setup.sh: '$1' is not on PATH; it is needed for the $2 peers" >&2
        exit 1
    fi
}
need python3 Python
need node TypeScript
need npm TypeScript
need cargo Rust

echo "== Python SDK -> $here/.venv"
if [ ! -x "$here/.venv/bin/python" ]; then
    python3 -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --requirement "$here/python/requirements.txt" \
    --requirement "$here/mcp/requirements.txt"

echo "== TypeScript SDK -> $here/ts/node_modules"
# `npm ci` installs exactly what package-lock.json pins.
if [ ! -d "$here/ts/node_modules/@agentclientprotocol/sdk" ] \
    || [ "$here/ts/package-lock.json" -nt "$here/ts/node_modules/.package-lock.json" ]; then
    (cd "$here/ts" && npm ci --no-audit --no-fund --loglevel=error)
fi

echo "== TypeScript SDK network peers -> $here/ts-http/node_modules"
if [ ! -d "$here/ts-http/node_modules/ws" ] \
    || [ "$here/ts-http/package-lock.json" -nt "$here/ts-http/node_modules/.package-lock.json" ]; then
    (cd "$here/ts-http" && npm ci --no-audit --no-fund --loglevel=error)
fi

echo "== MCP servers -> $here/mcp/node_modules"
if [ ! -d "$here/mcp/node_modules/@modelcontextprotocol/server-everything" ] \
    || [ "$here/mcp/package-lock.json" -nt "$here/mcp/node_modules/.package-lock.json" ]; then
    (cd "$here/mcp" && npm ci --no-audit --no-fund --loglevel=error)
fi

echo "== Rust SDK peers -> $here/rust/target/debug/{peer-client,peer-agent}"
# An explicit --target-dir, because CARGO_TARGET_DIR (many set it globally) would otherwise move
# the peers away from the paths the tests and scripts run them from.
cargo build --quiet --manifest-path "$here/rust/Cargo.toml" --target-dir "$here/rust/target"

echo "== Rust SDK network peers -> $here/rust-http/target/debug/{net-client,net-agent,net-bench}"
cargo build --quiet --manifest-path "$here/rust-http/Cargo.toml" --target-dir "$here/rust-http/target"

echo "setup done"
