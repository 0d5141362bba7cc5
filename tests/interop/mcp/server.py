"""A small MCP server written with the official Python SDK (`mcp`, pinned in
requirements.txt), for the agent's MCP client tests: stdio by default, or streamable
HTTP on loopback with `server.py http PORT`."""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("acp-cli-test-python")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def count_words(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


@server.tool()
def shout(text: str) -> str:
    """Say the text in capitals."""
    return text.upper() + "!"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
