"""Requests the agent waits on: permissions, file writes, commands, until answered.

`session/request_permission` becomes `RequestAsked(PermissionRequest)`:
the tool call it carries is merged into the `ToolBook` (Gemini sends no
`tool_call` before asking), and the offered options are mapped by their
`kind` (allow_once → AllowOnce, allow_always → AllowAlways, reject_once →
DenyOnce, reject_always → DenyAlways; the first option of each kind wins,
because option ids differ per agent). The answer selects that option's id;
a withdrawn request (cancel, turn end, close) gets the `cancelled` outcome.

`fs/write_text_file` becomes a permission request of its own (an Edit
tool with the diff), so every write passes the session's policy; only an
allowing answer yields `WriteFile`, which the driver performs.

`terminal/create` is judged the same way, as an Execute permission
request with the command line, unless the agent already asked permission
for exactly that command line and it was allowed: each allowed permission
whose tool is a command leaves a one-shot grant (cleared when the next
turn begins), which a `terminal/create` of the same line consumes instead
of asking twice (the Claude adapter asks, then runs the command through
corral's terminal). Only an allowing answer yields `RunCommand`; a deny
fails the request with the policy's message.

`Asks` holds what is open, keyed by corral's request id; each request is
settled exactly once (`answer` or `withdraw`). Pure data: no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.driver import DriverEvent, Emitted, RequestAsked
from ...pipeline.events import (
    Answer,
    CommandInput,
    FileDiff,
    PathInput,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from ._frames import REQUEST_CANCELLED
from ._terminal import CommandSpec
from ._tools import ToolBook

__all__ = ["Asks", "Reply", "ReplyError", "RunCommand", "WriteFile"]

_MAX_GRANTS = 16

_CHOICES = {
    "allow_once": PermissionChoice.ALLOW_ONCE,
    "allow_always": PermissionChoice.ALLOW_ALWAYS,
    "reject_once": PermissionChoice.DENY_ONCE,
    "reject_always": PermissionChoice.DENY_ALWAYS,
}
_CANCELLED = {"outcome": {"outcome": "cancelled"}}


@attrs.frozen
class Reply:
    """Answer the agent's request `rpc_id` with `result`."""

    rpc_id: int | str
    result: object


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
    path: str
    content: str
    tool: ToolUpdate


@attrs.frozen(kw_only=True)
class RunCommand:
    """The app allowed a command: start its terminal, reply with its id, show `tool`."""

    rpc_id: int | str
    spec: CommandSpec
    tool: ToolUpdate | None  # None: the agent's own tool call shows it (a grant)


@attrs.frozen(kw_only=True)
class _Permission:
    rpc_id: int | str
    option_ids: Mapping[PermissionChoice, str]
    tool_id: str


@attrs.frozen(kw_only=True)
class _Write:
    rpc_id: int | str
    path: str
    content: str
    tool: ToolUpdate


@attrs.frozen(kw_only=True)
class _Command:
    rpc_id: int | str
    spec: CommandSpec
    tool: ToolUpdate


def _offered(raw_options: object) -> dict[PermissionChoice, str]:
    offered: dict[PermissionChoice, str] = {}
    for option in raw_options if isinstance(raw_options, list) else []:
        if not isinstance(option, dict) or not isinstance(option.get("optionId"), str):
            continue
        choice = _CHOICES.get(str(option.get("kind")))
        if choice is not None and choice not in offered:
            offered[choice] = option["optionId"]
    return offered


class Asks:
    def __init__(self, tools: ToolBook) -> None:
        self._tools = tools
        self._open: dict[str, _Permission | _Write | _Command] = {}
        self._count = 0
        self._grants: deque[str] = deque(maxlen=_MAX_GRANTS)

    def _next_id(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def open_ids(self) -> list[str]:
        return list(self._open)

    def permission(self, rpc_id: int | str, params: Mapping[str, Any]) -> list[DriverEvent]:
        """`session/request_permission` → the tool (if it changed) and the request."""
        offered = _offered(params.get("options"))
        fields = params.get("toolCall")
        fields = fields if isinstance(fields, dict) else {}
        events: list[DriverEvent] = []
        tool_id = fields.get("toolCallId")
        if isinstance(tool_id, str):
            before = self._tools.snapshot(tool_id)
            tool = self._tools.updated(fields)
            assert tool is not None
            if before is not None and before != tool:
                events.append(Emitted(kind=ToolUpdated(tool)))
        else:
            tool = self._tools.updated({**fields, "toolCallId": self._next_id("acp-tool-")})
            assert tool is not None
        request_id = self._next_id("perm-")
        self._open[request_id] = _Permission(rpc_id=rpc_id, option_ids=offered, tool_id=tool.id)
        request = PermissionRequest(id=request_id, tool=tool, options=tuple(offered))
        events.append(
            RequestAsked(request=request, extensions={"acp/options": params.get("options")})
        )
        return events

    def write(
        self, rpc_id: int | str, *, path: str, content: str, old_text: str | None
    ) -> list[DriverEvent]:
        """`fs/write_text_file` inside the session dir → an Edit permission request."""
        request_id = self._next_id("write-")
        tool = ToolUpdate(
            id=f"fs-{request_id}",
            kind=ToolKind.EDIT,
            title=f"Write {path}",
            status=ToolStatus.PENDING,
            input=PathInput(path),
            diffs=(FileDiff(path=path, old_text=old_text, new_text=content),),
            locations=(path,),
        )
        self._open[request_id] = _Write(rpc_id=rpc_id, path=path, content=content, tool=tool)
        request = PermissionRequest(
            id=request_id,
            tool=tool,
            options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE),
            detail="the agent asks corral to write this file",
        )
        return [RequestAsked(request=request)]

    def command(self, rpc_id: int | str, spec: CommandSpec) -> RunCommand | list[DriverEvent]:
        """`terminal/create`: run at once on a grant, else an Execute permission request."""
        if self.take_grant(spec.line):
            return RunCommand(rpc_id=rpc_id, spec=spec, tool=None)
        request_id = self._next_id("command-")
        tool = ToolUpdate(
            id=f"terminal-{request_id}",
            kind=ToolKind.EXECUTE,
            title=spec.line,
            status=ToolStatus.PENDING,
            input=CommandInput(command=spec.line, cwd=spec.cwd or None),
        )
        self._open[request_id] = _Command(rpc_id=rpc_id, spec=spec, tool=tool)
        request = PermissionRequest(
            id=request_id,
            tool=tool,
            options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE),
            detail="the agent asks corral to run this command in a terminal",
        )
        return [RequestAsked(request=request)]

    def _grant(self, tool_id: str) -> None:
        tool = self._tools.snapshot(tool_id)
        if tool is not None and isinstance(tool.input, CommandInput):
            self._grants.append(tool.input.command.strip())

    def take_grant(self, line: str) -> bool:
        """Consume the grant an allowed permission left for exactly this command line."""
        try:
            self._grants.remove(line.strip())
        except ValueError:
            return False
        return True

    def clear_grants(self) -> None:
        self._grants.clear()

    def answer(
        self, request_id: str, answer: Answer, message: str | None = None
    ) -> Reply | ReplyError | WriteFile | RunCommand | None:
        """The app's (or the policy's) answer; None for a request not open here."""
        asked = self._open.pop(request_id, None)
        if asked is None:
            return None
        choice = answer.choice if isinstance(answer, PermissionAnswer) else None
        allows = choice is not None and choice.allows
        if isinstance(asked, _Permission):
            option_id = None if choice is None else asked.option_ids.get(choice)
            if not allows:
                self._tools.refuse(asked.tool_id)
            if option_id is None:
                return Reply(asked.rpc_id, _CANCELLED)
            if allows:
                self._grant(asked.tool_id)
            return Reply(asked.rpc_id, {"outcome": {"outcome": "selected", "optionId": option_id}})
        if isinstance(asked, _Command):
            if allows:
                tool = attrs.evolve(asked.tool, status=ToolStatus.RUNNING)
                return RunCommand(rpc_id=asked.rpc_id, spec=asked.spec, tool=tool)
            return _refused_command(asked, message or "denied by corral's permission policy")
        if allows:
            tool = attrs.evolve(asked.tool, status=ToolStatus.RUNNING)
            return WriteFile(rpc_id=asked.rpc_id, path=asked.path, content=asked.content, tool=tool)
        return _refused(asked, "denied")

    def recorded_answer(self, rpc_id: object, result: object) -> None:
        """Replay: the recorded wire shows how a permission (or command) request was answered."""
        for request_id, asked in list(self._open.items()):
            if isinstance(asked, _Command) and asked.rpc_id == rpc_id:
                del self._open[request_id]  # the command was run or refused
            if not isinstance(asked, _Permission) or asked.rpc_id != rpc_id:
                continue
            del self._open[request_id]
            outcome = result.get("outcome") if isinstance(result, dict) else None
            chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
            allowing = {asked.option_ids.get(c) for c in PermissionChoice if c.allows}
            if chosen is None or chosen not in allowing:
                self._tools.refuse(asked.tool_id)
            else:
                self._grant(asked.tool_id)

    def withdraw(self, request_id: str) -> Reply | ReplyError | None:
        """The request will not be answered (cancel, turn end, close)."""
        asked = self._open.pop(request_id, None)
        if asked is None:
            return None
        if isinstance(asked, _Permission):
            self._tools.refuse(asked.tool_id)
            return Reply(asked.rpc_id, _CANCELLED)
        if isinstance(asked, _Command):
            return _refused_command(asked, "the request was withdrawn (cancel, turn end or close)")
        return _refused(asked, "cancelled")


def _refused(asked: _Write, how: str) -> ReplyError:
    tool = attrs.evolve(asked.tool, status=ToolStatus.CANCELLED)
    return ReplyError(asked.rpc_id, REQUEST_CANCELLED, f"writing {asked.path} was {how}", tool)


def _refused_command(asked: _Command, why: str) -> ReplyError:
    tool = attrs.evolve(asked.tool, status=ToolStatus.CANCELLED)
    message = f"corral did not run `{asked.spec.line}`: {why}"
    return ReplyError(asked.rpc_id, REQUEST_CANCELLED, message, tool, warning=message)
