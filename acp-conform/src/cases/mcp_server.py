"""A small stdio MCP server for `acp-cli conform`'s `mcp/*` cases (R-MCP-12..R-MCP-14).

    python3 mcp_server.py RECORD MODE

Standard library only. It answers `initialize` (echoing the version asked for), `ping`,
`tools/list` (one tool, `conform_echo`) and `tools/call`, and `-32601` for anything else. At
start and again after answering `initialize` it writes RECORD (JSON, replaced atomically): its
pid, the `ACP_CONFORM_*` variables of its environment and whether `initialize` came. MODE
`crash` exits right after answering `initialize`: a server that dies under its agent.
"""

import json
import os
import sys

RECORD, MODE = sys.argv[1], sys.argv[2]
state = {"pid": os.getpid(), "initialized": False,
         "env": {k: v for k, v in os.environ.items() if k.startswith("ACP_CONFORM_")}}


def record():
    tmp = RECORD + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, RECORD)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


record()
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        continue
    method, ident = message["method"], message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        state["initialized"] = True
        record()
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "acp-conform-mcp", "version": "1"}}})
        if MODE == "crash":
            sys.exit(3)
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [{
            "name": "conform_echo",
            "description": "Echoes its text.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}})
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        send({"jsonrpc": "2.0", "id": ident,
              "result": {"content": [{"type": "text", "text": text}], "isError": False}})
    else:
        send({"jsonrpc": "2.0", "id": ident,
              "error": {"code": -32601, "message": "Method not found"}})
