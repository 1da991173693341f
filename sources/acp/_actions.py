"""What answering the agent's waiting requests comes to: the actions the driver performs.

`Asks` (`_asks.py`) turns the engine's answer to a request into one of
these; the driver carries it out (`_requests.AgentRequests`): reply, fail
the request, read or write the judged file, or start the command. Pure
data.
"""

from __future__ import annotations

import attrs

from ...pipeline.events import ToolUpdate
from ._fs import Judged
from ._terminal import CommandSpec

__all__ = ["ReadFile", "Reply", "ReplyError", "RunCommand", "WriteFile"]


@attrs.frozen
class Reply:
    """Answer the agent's request `rpc_id` with `result`; `warning`: tell the app too."""

    rpc_id: int | str
    result: object
    warning: str | None = None


@attrs.frozen
class ReplyError:
    """Fail the agent's request; `tool` (a refused write) is then shown cancelled.

    `warning`: the app hears of the refusal as a Warning Diagnostic too.
    """

    rpc_id: int | str
    code: int
    message: str
    tool: ToolUpdate | None = None
    warning: str | None = None


@attrs.frozen(kw_only=True)
class WriteFile:
    """The app allowed a write: perform it, then reply and finish `tool`."""

    rpc_id: int | str
    judged: Judged
    content: str
    tool: ToolUpdate

    @property
    def path(self) -> str:
        return self.judged.path


@attrs.frozen(kw_only=True)
class ReadFile:
    """The app allowed a read: read the judged file, reply with its text, finish `tool`."""

    rpc_id: int | str
    judged: Judged
    line: int | None
    limit: int | None
    tool: ToolUpdate


@attrs.frozen(kw_only=True)
class RunCommand:
    """The app allowed a command: start its terminal, reply with its id, show `tool`."""

    rpc_id: int | str
    spec: CommandSpec
    tool: ToolUpdate | None  # None: the agent's own tool call shows it (a grant)
