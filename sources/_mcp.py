"""corral's MCP servers in the `mcpServers` JSON shape the CLIs share.

Claude Code (`--mcp-config`) and Copilot (`session.create`) take the same
entry: a local server's command line and environment, or a remote
server's URL and headers, told apart by `type`. They differ only in what
they call a local server; other keys a CLI wants are added by its
provider. (ACP and Codex have wires of their own.)
"""

from __future__ import annotations

from typing import Any

from ..pipeline.commands import McpServer

__all__ = ["mcp_entry"]


def mcp_entry(server: McpServer, *, local: str) -> dict[str, Any]:
    """One server's entry; `local` is the `type` the CLI names a Stdio server."""
    if server.transport == "Stdio":
        return {
            "type": local,
            "command": server.command or "",
            "args": list(server.args),
            "env": dict(server.env),
        }
    return {  # Http or Sse
        "type": server.transport.lower(),
        "url": server.url or "",
        "headers": dict(server.headers),
    }
