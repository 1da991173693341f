"""`OpenOptions`: the typed keyword arguments of `Runtime.open` and `generate`.

What flows in: the keywords a caller passes beside the agent and the folder.
What flows out: the pipeline's `SessionOptions`, the one value every session
is opened from (the line protocol's `open` decodes into the same value).
The keywords are a `TypedDict` read through `Unpack`, so a type checker
checks each one by name and type at the call site (`env=` takes pairs, a
misspelt option is an error), and nothing untyped reaches `SessionOptions`.
"""

from __future__ import annotations

from typing import TypedDict

from ..pipeline.commands import AgentRef, McpServer, PermissionMode, SessionOptions
from ..pipeline.events import ConfigValue

__all__ = ["OpenOptions", "session_options"]


class OpenOptions(TypedDict, total=False):
    """Every option of `SessionOptions` but the agent and the folder; all optional."""

    resume: str | None
    fork: str | None
    fork_at: str | None
    permission_mode: PermissionMode | None
    mcp_servers: tuple[McpServer, ...]
    configure: tuple[tuple[str, ConfigValue], ...]
    env: tuple[tuple[str, str], ...]  # added to corral's environment
    args: tuple[str, ...]  # appended to the launch arguments
    policy: str | None  # a policy file for this session
    show_auto_decisions: bool
    sandbox: bool


def session_options(
    agent: AgentRef | SessionOptions, dir: str, options: OpenOptions
) -> SessionOptions:
    """The session's options: `agent` itself when it already is them, else built."""
    if isinstance(agent, SessionOptions):
        if options:
            raise TypeError(f"options given twice: in SessionOptions and as {sorted(options)}")
        return agent
    return SessionOptions(agent=agent, dir=dir, **options)
