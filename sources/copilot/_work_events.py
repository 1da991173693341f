"""Work that is not a model tool call but reads like one: each becomes a `ToolUpdate`.

- `assistant.tool_call_delta`: the model streams a tool call's arguments
  before it runs; the call shows as Pending with the arguments so far
  (`raw.input`, a string) and is refined by `tool.execution_start`;
- `tool.user_requested`: the user ran a tool directly (Running);
- `assistant.server_tool_progress`: a tool the model provider runs itself
  (web search...), id `server-<outputIndex>`, Completed when its status
  says so;
- `hook.start` / `hook.end`: a hook run, id the invocation, Failed with
  its error; `hook.progress` (which names no invocation) refines the latest
  running hook with `copilot/progress`, or is an Info note when none runs;
- `command.queued` / `command.execute` / `command.completed`: a slash
  command Copilot runs (Pending, Running, Completed), id the request;
- `skill.invoked`: a skill loaded into the conversation (Completed, its
  path as input);
- `mcp_app.tool_call_complete`: an MCP app's tool call (an `Mcp` tool,
  Completed or Failed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    Mcp,
    PathInput,
    RawTool,
    TextInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from .._snapshots import tool_ended
from ._base import Json, NormalizerState, as_str
from ._tools import named_tool, tool_kind

__all__ = ["WORK_HANDLERS", "WorkEvents"]

Handler = Callable[["WorkEvents", Json, Json], list[DriverEvent]]  # (state, event, data)

_FINISHED = frozenset({"completed", "done", "success", "succeeded"})
_FAILED = frozenset({"failed", "error", "incomplete"})


class WorkEvents(NormalizerState):
    def __init__(self) -> None:
        super().__init__()
        self._drafts: dict[str, str] = {}  # tool call id -> arguments streamed so far
        self._hooks: list[str] = []  # running hook invocations, oldest first

    def _call_delta(self, event: Json, data: Json) -> list[DriverEvent]:
        tool_id, name = as_str(data, "toolCallId"), as_str(data, "toolName")
        draft = self._drafts.get(tool_id, "") + as_str(data, "inputDelta")
        self._drafts[tool_id] = draft
        known = self._tools.get(tool_id)
        base = known or ToolUpdate(
            id=tool_id, kind=tool_kind(name, "", ""), title=name, status=ToolStatus.PENDING
        )
        raw = RawTool(name=name or (base.raw.name if base.raw else ""), input=draft)
        return [self._tool(event, attrs.evolve(base, raw=raw))]

    def _user_requested(self, event: Json, data: Json) -> list[DriverEvent]:
        name, arguments = as_str(data, "toolName"), data.get("arguments")
        kind = tool_kind(name, "", "")
        tool_id = as_str(data, "toolCallId")
        tool = named_tool(tool_id, name, kind, name, ToolStatus.RUNNING, arguments)
        return [self._tool(event, tool, {"copilot/user_requested": True})]

    def _server_tool(self, event: Json, data: Json) -> list[DriverEvent]:
        kind, status = as_str(data, "kind"), as_str(data, "status").lower()
        tool = ToolUpdate(
            id=f"server-{data.get('outputIndex')}",
            kind=ToolKind.FETCH if "search" in kind or "fetch" in kind else ToolKind.OTHER,
            title=kind,
            status=_status(status),
            raw=RawTool(name=kind, input=None),
        )
        return [self._tool(event, tool, {"copilot/server_tool_status": status})]

    def _hook_start(self, event: Json, data: Json) -> list[DriverEvent]:
        hook_id, hook_type = as_str(data, "hookInvocationId"), as_str(data, "hookType")
        self._hooks.append(hook_id)
        tool = ToolUpdate(
            id=hook_id,
            kind=ToolKind.OTHER,
            title=f"{hook_type} hook",
            status=ToolStatus.RUNNING,
            raw=RawTool(name=f"hook:{hook_type}", input=data.get("input")),
        )
        return [self._tool(event, tool)]

    def _hook_end(self, event: Json, data: Json) -> list[DriverEvent]:
        hook_id = as_str(data, "hookInvocationId")
        if hook_id in self._hooks:
            self._hooks.remove(hook_id)
        known = self._tools.pop(hook_id, None) or ToolUpdate(
            id=hook_id,
            kind=ToolKind.OTHER,
            title=f"{as_str(data, 'hookType')} hook",
            status=ToolStatus.RUNNING,
        )
        error = data.get("error")
        ok = data.get("success") is True
        output = _text(data.get("output"))
        if not ok and isinstance(error, Mapping):
            output = as_str(error, "message") or output
        status = ToolStatus.COMPLETED if ok else ToolStatus.FAILED
        return [self._emit_tool(event, tool_ended(known, status, output))]

    def _hook_progress(self, event: Json, data: Json) -> list[DriverEvent]:
        message = as_str(data, "message")
        if not self._hooks:
            return [self._emit(event, Diagnostic(level=DiagnosticLevel.INFO, message=message))]
        tool = self._known_tool(self._hooks[-1])
        return [self._tool(event, tool, {"copilot/progress": message})]

    def _command(self, event: Json, data: Json) -> list[DriverEvent]:
        request_id, kind = as_str(data, "requestId"), as_str(event, "type")
        known = self._tools.get(request_id)
        title = as_str(data, "command") or (known.title if known else request_id)
        if kind == "command.completed":
            self._tools.pop(request_id, None)
            done = known or ToolUpdate(
                id=request_id, kind=ToolKind.OTHER, title=title, status=ToolStatus.RUNNING
            )
            return [self._emit_tool(event, attrs.evolve(done, status=ToolStatus.COMPLETED))]
        status = ToolStatus.RUNNING if kind == "command.execute" else ToolStatus.PENDING
        tool = ToolUpdate(
            id=request_id,
            kind=ToolKind.OTHER,
            title=title,
            status=status,
            input=TextInput(title),
            raw=RawTool(name=as_str(data, "commandName") or "command", input=dict(data)),
        )
        return [self._tool(event, tool)]

    def _skill(self, event: Json, data: Json) -> list[DriverEvent]:
        name = as_str(data, "name")
        tool = ToolUpdate(
            id=as_str(event, "id") or f"skill-{name}",
            kind=ToolKind.READ,
            title=f"skill {name}",
            status=ToolStatus.COMPLETED,
            input=PathInput(as_str(data, "path")),
            raw=RawTool(name="skill", input={"name": name, "path": as_str(data, "path")}),
        )
        return [self._emit_tool(event, tool)]

    def _mcp_app(self, event: Json, data: Json) -> list[DriverEvent]:
        server, name = as_str(data, "serverName"), as_str(data, "toolName")
        ok = data.get("success") is True
        error = data.get("error")
        output = _text(data.get("result"))
        if not ok and isinstance(error, Mapping):
            output = as_str(error, "message") or output
        tool = ToolUpdate(
            id=as_str(event, "id") or f"{server}-{name}",
            kind=Mcp(server=server, tool=name),
            title=name,
            status=ToolStatus.COMPLETED if ok else ToolStatus.FAILED,
            output=output,
            raw=RawTool(name=name, input=data.get("arguments")),
        )
        return [self._emit_tool(event, tool)]

    def _emit_tool(self, event: Json, tool: ToolUpdate) -> Emitted:
        """A finished snapshot: emitted, not remembered."""
        return self._emit(event, ToolUpdated(tool))


def _status(status: str) -> ToolStatus:
    if status in _FINISHED:
        return ToolStatus.COMPLETED
    if status in _FAILED:
        return ToolStatus.FAILED
    return ToolStatus.RUNNING


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        content = value.get("content")
        if isinstance(content, str):
            return content
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


WORK_HANDLERS: dict[str, Handler] = {
    "assistant.tool_call_delta": WorkEvents._call_delta,
    "tool.user_requested": WorkEvents._user_requested,
    "assistant.server_tool_progress": WorkEvents._server_tool,
    "hook.start": WorkEvents._hook_start,
    "hook.end": WorkEvents._hook_end,
    "hook.progress": WorkEvents._hook_progress,
    "command.queued": WorkEvents._command,
    "command.execute": WorkEvents._command,
    "command.completed": WorkEvents._command,
    "skill.invoked": WorkEvents._skill,
    "mcp_app.tool_call_complete": WorkEvents._mcp_app,
}
