"""What corral can do with Copilot on its native wire, known before starting it."""

from __future__ import annotations

from ...pipeline.events import (
    AgentDetails,
    Authenticated,
    AuthKind,
    Capabilities,
    Capability,
    McpTransport,
    UnknownAuth,
)

__all__ = ["copilot_details"]

FEATURES = frozenset(
    {
        Capability.RESUME,
        Capability.STEER,
        Capability.PERMISSIONS,
        Capability.QUESTIONS,
        Capability.SUBAGENTS,
        Capability.CONTEXT_USAGE,
        Capability.COMPACT,  # `session.history.compact`
    }
)


def copilot_details(version: str | None = None, *, byok: bool = False) -> AgentDetails:
    """`byok`: a bring-your-own-key provider serves the model (no GitHub login needed)."""
    return AgentDetails(
        version=version,
        auth=Authenticated(kind=AuthKind.API_KEY) if byok else UnknownAuth(),
        capabilities=Capabilities(
            features=FEATURES,
            mcp_transports=(McpTransport.STDIO, McpTransport.HTTP, McpTransport.SSE),
        ),
    )
