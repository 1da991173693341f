"""Requests the agent waits on: permissions, file reads and writes, commands.

`session/request_permission` becomes `RequestAsked(PermissionRequest)`:
the tool call it carries is merged into the `ToolBook` (Gemini sends no
`tool_call` before asking), and the offered options are mapped by their
`kind` (allow_once → AllowOnce, allow_always → AllowAlways, reject_once →
DenyOnce, reject_always → DenyAlways; the first option of each kind wins,
because option ids differ per agent). The answer selects that option's id;
a withdrawn request (cancel, turn end, close) gets the `cancelled` outcome.

A decision is bound to what was judged. The tool as the policy saw it
(kind, title, input, raw input, diffs, locations) is kept with the
request; if the agent changed any of it (a `tool_call_update` with a new
`rawInput`, title or command) before the answer arrives, an allowing
answer is not carried over: the agent gets its reject option (or
`cancelled`), the tool is marked refused, and the app hears why in a
Warning Diagnostic. The agent may ask again; that is judged afresh.

`fs/read_text_file` and `fs/write_text_file` become permission requests
of their own (a Read tool with the path, an Edit tool with the diff), so
every file access passes the session's policy, and its secret-read and
write guards; only an allowing answer yields `ReadFile` / `WriteFile`,
which the driver performs on the very file that was judged (`_fs.Judged`).

`terminal/create` is judged the same way, as an Execute permission
request showing the whole request (command, args, cwd, env), unless the
agent already asked permission for exactly that command line and it was
allowed: each allowed permission whose judged tool is a command leaves a
one-shot grant (cleared when the next turn begins) for that command line,
byte for byte, and its cwd when it named one; a `terminal/create` whose
line (`command` and `args`) is the same and that sets no variable that
changes what runs consumes it instead of asking twice (the Claude adapter
asks, then runs the command through corral's terminal). A command that
sets such a variable (`PATH`, `LD_*`, ...) is offered without `AllowOnce`
so that no mode allows it on its own (see `_terminal.changes_what_runs`).
Only an allowing answer yields `RunCommand`; a deny fails the request
with the policy's message.

`elicitation/create` with a form corral can show becomes a Question
request (`_elicit`); the answer goes back in the agent's shape (accept
with the fields, decline, or cancel when withdrawn). A form corral cannot
show is declined at once (a `Reply` with the decline and a warning saying
why).

`Asks` holds what is open, keyed by corral's request id, at most
`MAX_OPEN_ASKS` at once (`full()`: the caller refuses the excess); each
request is settled exactly once (`answer` or `withdraw`). Pure data: no I/O.
"""

from __future__ import annotations

import os
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
    QuestionRequest,
    RawTool,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from ._actions import ReadFile, Reply, ReplyError, RunCommand, WriteFile
from ._ask_records import (
    Grant,
    OpenCommand,
    OpenElicit,
    OpenPermission,
    offered_choices,
    refused,
    refused_command,
    what_was_judged,
)
from ._elicit import CANCEL, DECLINE, form_of
from ._fs import Judged
from ._terminal import CommandSpec
from ._tools import ToolBook

__all__ = [
    "MAX_OPEN_ASKS",
    "Asks",
    "ReadFile",
    "Reply",
    "ReplyError",
    "RunCommand",
    "WriteFile",
]

MAX_OPEN_ASKS = 64  # permission, read, write and command requests open at once
_MAX_GRANTS = 16

_CANCELLED = {"outcome": {"outcome": "cancelled"}}
_ONCE = (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
# Offered for a command that changes what runs: no mode and no deadline picks it.
_NOT_AUTOMATIC = (PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE)
_ALLOWING = tuple(choice for choice in PermissionChoice if choice.allows)


class Asks:
    def __init__(self, tools: ToolBook) -> None:
        self._tools = tools
        self._open: dict[str, OpenPermission | WriteFile | ReadFile | OpenCommand | OpenElicit] = {}
        self._count = 0
        self._grants: deque[Grant] = deque(maxlen=_MAX_GRANTS)

    def _next_id(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def open_ids(self) -> list[str]:
        return list(self._open)

    def full(self) -> bool:
        """`MAX_OPEN_ASKS` requests are open: the next one must be refused."""
        return len(self._open) >= MAX_OPEN_ASKS

    def permission(self, rpc_id: int | str, params: Mapping[str, Any]) -> list[DriverEvent]:
        """`session/request_permission` → the tool (if it changed) and the request."""
        offered = offered_choices(params.get("options"))
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
        self._open[request_id] = OpenPermission(
            rpc_id=rpc_id, option_ids=offered, tool_id=tool.id, judged=tool
        )
        request = PermissionRequest(id=request_id, tool=tool, options=tuple(offered))
        events.append(
            RequestAsked(request=request, extensions={"acp/options": params.get("options")})
        )
        return events

    def elicitation(
        self, rpc_id: int | str, params: Mapping[str, Any]
    ) -> Reply | list[DriverEvent]:
        """`elicitation/create` → a Question request, or a decline saying why not."""
        form = form_of(params)
        if isinstance(form, str):
            why = f"the agent asked for input corral cannot show: {form}; declined"
            return Reply(rpc_id, DECLINE, warning=why)
        request_id = self._next_id("elicit-")
        self._open[request_id] = OpenElicit(rpc_id=rpc_id, form=form)
        return [RequestAsked(request=QuestionRequest(id=request_id, questions=form.questions))]

    def read(
        self, rpc_id: int | str, judged: Judged, *, line: int | None, limit: int | None
    ) -> list[DriverEvent]:
        """`fs/read_text_file` beneath the session dir → a Read permission request."""
        request_id = self._next_id("read-")
        raw = RawTool(
            name="fs/read_text_file", input={"path": judged.path, "line": line, "limit": limit}
        )
        tool = _fs_tool(request_id, ToolKind.READ, "Read", judged.path, raw=raw)
        read = ReadFile(rpc_id=rpc_id, judged=judged, line=line, limit=limit, tool=tool)
        return self._ask_file(request_id, read, "the agent asks corral to read this file")

    def write(
        self,
        rpc_id: int | str,
        *,
        path: str,
        content: str,
        old_text: str | None,
        judged: Judged | None = None,
    ) -> list[DriverEvent]:
        """`fs/write_text_file` beneath the session dir → an Edit permission request."""
        judged = judged if judged is not None else Judged(path=path, file=None, text=old_text)
        request_id = self._next_id("write-")
        diff = FileDiff(path=judged.path, old_text=judged.text, new_text=content)
        tool = _fs_tool(request_id, ToolKind.EDIT, "Write", judged.path, diffs=(diff,))
        write = WriteFile(rpc_id=rpc_id, judged=judged, content=content, tool=tool)
        return self._ask_file(request_id, write, "the agent asks corral to write this file")

    def _ask_file(
        self, request_id: str, ask: ReadFile | WriteFile, detail: str
    ) -> list[DriverEvent]:
        self._open[request_id] = ask
        request = PermissionRequest(id=request_id, tool=ask.tool, options=_ONCE, detail=detail)
        return [RequestAsked(request=request)]

    def command(self, rpc_id: int | str, spec: CommandSpec) -> RunCommand | list[DriverEvent]:
        """`terminal/create`: run at once on a grant, else an Execute permission request."""
        if self.take_grant(spec):
            return RunCommand(rpc_id=rpc_id, spec=spec, tool=None)
        request_id = self._next_id("command-")
        tool = ToolUpdate(
            id=f"terminal-{request_id}",
            kind=ToolKind.EXECUTE,
            title=spec.line,
            status=ToolStatus.PENDING,
            input=CommandInput(command=spec.line, cwd=spec.cwd or None),
            raw=RawTool(name="terminal/create", input=spec.shown()),
        )
        self._open[request_id] = OpenCommand(rpc_id=rpc_id, spec=spec, tool=tool)
        detail = "the agent asks corral to run this command in a terminal"
        options = _ONCE
        if changing := spec.run_changing():
            options = _NOT_AUTOMATIC
            detail += (
                f"; it sets {', '.join(changing)}, which changes what runs, so corral "
                "never allows it on its own (AllowAlways runs it this once)"
            )
        request = PermissionRequest(id=request_id, tool=tool, options=options, detail=detail)
        return [RequestAsked(request=request)]

    def _grant(self, judged: ToolUpdate) -> None:
        if isinstance(judged.input, CommandInput):
            self._grants.append(Grant(judged.input.command, judged.input.cwd))

    def take_grant(self, spec: CommandSpec) -> bool:
        """Consume the grant an allowed permission left for exactly this command."""
        if spec.run_changing():
            return False  # what the grant judged did not set these
        for grant in self._grants:
            if grant.command != spec.line:
                continue
            if grant.cwd is not None and os.path.normpath(grant.cwd) != spec.cwd:
                continue
            self._grants.remove(grant)
            return True
        return False

    def clear_grants(self) -> None:
        self._grants.clear()

    def answer(
        self, request_id: str, answer: Answer, message: str | None = None
    ) -> Reply | ReplyError | ReadFile | WriteFile | RunCommand | None:
        """The app's (or the policy's) answer; None for a request not open here."""
        asked = self._open.pop(request_id, None)
        if asked is None:
            return None
        choice = answer.choice if isinstance(answer, PermissionAnswer) else None
        allows = choice is not None and choice.allows
        match asked:
            case OpenElicit(rpc_id=rpc_id, form=form):
                return Reply(rpc_id, form.reply(answer))
            case OpenPermission():
                return self._permission_answer(asked, choice)
            case OpenCommand() if allows:
                tool = attrs.evolve(asked.tool, status=ToolStatus.RUNNING)
                return RunCommand(rpc_id=asked.rpc_id, spec=asked.spec, tool=tool)
            case OpenCommand():
                return refused_command(asked, message or "denied by corral's permission policy")
            case ReadFile() | WriteFile() if allows:
                return attrs.evolve(asked, tool=attrs.evolve(asked.tool, status=ToolStatus.RUNNING))
        return refused(asked, "denied", message)

    def _permission_answer(
        self, asked: OpenPermission, choice: PermissionChoice | None
    ) -> Reply | ReplyError:
        allows = choice is not None and choice.allows
        now = self._tools.snapshot(asked.tool_id)
        if allows and (now is None or what_was_judged(now) != what_was_judged(asked.judged)):
            return self._changed(asked)
        option_id = None if choice is None else asked.option_ids.get(choice)
        if not allows:
            self._tools.refuse(asked.tool_id)
        if option_id is None:
            return Reply(asked.rpc_id, _CANCELLED)
        if allows:
            self._grant(asked.judged)
        return Reply(asked.rpc_id, {"outcome": {"outcome": "selected", "optionId": option_id}})

    def _changed(self, asked: OpenPermission) -> Reply:
        """The agent changed the tool while it waited: the allow does not carry over."""
        self._tools.refuse(asked.tool_id)
        warning = (
            f"the agent changed tool {asked.tool_id} while its permission request was open; "
            "corral refused it (the allow was for what had been judged)"
        )
        reject = asked.option_ids.get(PermissionChoice.DENY_ONCE)
        if reject is None:
            return Reply(asked.rpc_id, _CANCELLED, warning=warning)
        outcome = {"outcome": {"outcome": "selected", "optionId": reject}}
        return Reply(asked.rpc_id, outcome, warning=warning)

    def recorded_answer(self, rpc_id: object, result: object) -> None:
        """Replay: the recorded wire shows how a request of the agent was answered."""
        for request_id, asked in list(self._open.items()):
            if asked.rpc_id != rpc_id:
                continue
            if isinstance(asked, OpenCommand | ReadFile | WriteFile | OpenElicit):
                del self._open[request_id]  # it was served or refused
            if not isinstance(asked, OpenPermission):
                continue
            del self._open[request_id]
            outcome = result.get("outcome") if isinstance(result, dict) else None
            chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
            allowing = {asked.option_ids.get(choice) for choice in _ALLOWING}
            if chosen is None or chosen not in allowing:
                self._tools.refuse(asked.tool_id)
            else:
                self._grant(asked.judged)

    def withdraw(self, request_id: str) -> Reply | ReplyError | None:
        """The request will not be answered (cancel, turn end, close)."""
        asked = self._open.pop(request_id, None)
        if asked is None:
            return None
        if isinstance(asked, OpenElicit):
            return Reply(asked.rpc_id, CANCEL)
        if isinstance(asked, OpenPermission):
            self._tools.refuse(asked.tool_id)
            return Reply(asked.rpc_id, _CANCELLED)
        if isinstance(asked, OpenCommand):
            return refused_command(asked, "the request was withdrawn (cancel, turn end or close)")
        return refused(asked, "cancelled")


def _fs_tool(
    request_id: str,
    kind: ToolKind,
    verb: str,
    path: str,
    raw: RawTool | None = None,
    diffs: tuple[FileDiff, ...] = (),
) -> ToolUpdate:
    """The pending tool of a file the agent asks corral to read or write."""
    return ToolUpdate(
        id=f"fs-{request_id}",
        kind=kind,
        title=f"{verb} {path}",
        status=ToolStatus.PENDING,
        input=PathInput(path),
        diffs=diffs,
        locations=(path,),
        raw=raw,
    )
