"""Tool calls, sub-agents and requests: the handlers that refine tool snapshots.

Every tool call is one cumulative `ToolUpdate`: requested by the model
(`assistant.message` tool requests: Pending), started (Running, with kind
and input from its name and arguments, `Mcp` when an MCP server serves
it), streamed (`partial_result` as `ToolOutputDelta`, `progress` as the
same snapshot with `copilot/progress`), asked about (`permission.requested`
refines kind and input from the prompt), and finished (Completed or Failed
with its output). A sub-agent is the `Subagent` tool of the call that
spawned it; events from inside it carry that call as `parent_tool_id`.

One event yields nothing: a `partial_result` whose `partialOutput` is the
empty string (Copilot opens each shell run with one). A zero-length
`ToolOutputDelta` would carry nothing, and the tool's output reads the same
without it, so no information is lost. A `partial_result` without a string
`partialOutput` is not that: it is a malformed event (a Warning with the raw
frame).
"""

from __future__ import annotations

import attrs

from ...pipeline.driver import DriverEvent, Emitted, RequestWithdrawn
from ...pipeline.events import (
    Choice,
    Diagnostic,
    DiagnosticLevel,
    NoInput,
    PermissionRequest,
    Question,
    QuestionRequest,
    TextInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
)
from .._snapshots import tool_ended
from ._base import RAW_KEY, Json, NormalizerState, as_str, bad_shape, is_map
from ._tools import named_tool, permission_tool, tool_kind, tool_title

__all__ = ["ToolEvents"]


class ToolEvents(NormalizerState):
    def _requested_tool(self, event: Json, request: Json) -> Emitted:
        name, arguments = as_str(request, "name"), request.get("arguments")
        kind = tool_kind(name, as_str(request, "mcpServerName"), as_str(request, "mcpToolName"))
        title = tool_title(
            name, arguments, request.get("toolTitle"), request.get("intentionSummary")
        )
        tool_id = as_str(request, "toolCallId")
        tool = named_tool(tool_id, name, kind, title, ToolStatus.PENDING, arguments)
        return self._tool(event, tool)

    # ---- tools -----------------------------------------------------------------

    def _tool_start(self, event: Json, data: Json) -> list[DriverEvent]:
        tool_id, name = as_str(data, "toolCallId"), as_str(data, "toolName")
        arguments = data.get("arguments")
        kind = tool_kind(name, as_str(data, "mcpServerName"), as_str(data, "mcpToolName"))
        known = self._tools.get(tool_id)
        title = tool_title(
            name, arguments, data.get("toolTitle"), None if known is None else known.title
        )
        if known is not None and known.kind is ToolKind.SUBAGENT:
            kind = ToolKind.SUBAGENT  # a sub-agent began before its tool call did
        diffs = () if known is None else known.diffs
        tool = named_tool(tool_id, name, kind, title, ToolStatus.RUNNING, arguments, diffs)
        return [self._tool(event, tool)]

    def _tool_partial(self, event: Json, data: Json) -> list[DriverEvent]:
        text = data.get("partialOutput")
        if not isinstance(text, str):
            return [bad_shape(event, "tool.execution_partial_result without partialOutput")]
        if not text:
            return []  # the empty chunk each shell run opens with: see the module header
        return [self._emit(event, ToolOutputDelta(tool_id=as_str(data, "toolCallId"), text=text))]

    def _tool_progress(self, event: Json, data: Json) -> list[DriverEvent]:
        tool = self._known_tool(as_str(data, "toolCallId"))
        return [self._tool(event, tool, {"copilot/progress": as_str(data, "progressMessage")})]

    def _tool_complete(self, event: Json, data: Json) -> list[DriverEvent]:
        tool = self._known_tool(as_str(data, "toolCallId"))
        result, error = data.get("result"), data.get("error")
        output: str | None = None
        if is_map(result):
            output = as_str(result, "detailedContent") or as_str(result, "content")
        if data.get("success") is not True and is_map(error):
            output = as_str(error, "message") or output
        status = ToolStatus.COMPLETED if data.get("success") is True else ToolStatus.FAILED
        code = as_str(error, "code") if is_map(error) else ""
        extensions = {"copilot/error_code": code} if code else {}
        return [self._tool(event, tool_ended(tool, status, output), extensions)]

    def _subagent_started(self, event: Json, data: Json) -> list[DriverEvent]:
        tool_id = as_str(data, "toolCallId")
        agent = event.get("agentId")
        if isinstance(agent, str) and agent:
            self._agents[agent] = tool_id
        known = self._tools.get(tool_id)
        description = as_str(data, "agentDescription")
        tool = attrs.evolve(
            known
            or ToolUpdate(id=tool_id, kind=ToolKind.SUBAGENT, title="", status=ToolStatus.RUNNING),
            kind=ToolKind.SUBAGENT,
            title=as_str(data, "agentDisplayName") or as_str(data, "agentName"),
            status=ToolStatus.RUNNING,
        )
        if isinstance(tool.input, NoInput) and description:
            tool = attrs.evolve(tool, input=TextInput(description))
        extensions = {"copilot/agent_name": as_str(data, "agentName")}
        return [self._tool(event, tool, extensions, parent=False)]

    def _subagent_done(self, event: Json, data: Json) -> list[DriverEvent]:
        tool_id = as_str(data, "toolCallId")
        self._agents = {a: t for a, t in self._agents.items() if t != tool_id}
        known = self._tools.get(tool_id) or ToolUpdate(
            id=tool_id,
            kind=ToolKind.SUBAGENT,
            title=as_str(data, "agentDisplayName"),
            status=ToolStatus.RUNNING,
        )
        failed = event.get("type") == "subagent.failed"
        cancelled = data.get("cancelled") is True
        status = ToolStatus.CANCELLED if cancelled else ToolStatus.COMPLETED
        if failed:
            status = ToolStatus.FAILED
        output = as_str(data, "error") if failed else known.output
        stats = {k: data[k] for k in ("totalToolCalls", "totalTokens", "durationMs") if k in data}
        tool = attrs.evolve(known, kind=ToolKind.SUBAGENT, status=status, output=output)
        return [self._tool(event, tool, {"copilot/subagent": stats}, parent=False)]

    # ---- requests --------------------------------------------------------------

    def _permission_requested(self, event: Json, data: Json) -> list[DriverEvent]:
        request_id, prompt = as_str(data, "requestId"), data.get("permissionRequest")
        if not is_map(prompt):
            return [bad_shape(event, "permission.requested without a permissionRequest")]
        if data.get("resolvedByHook") is True:
            note = Diagnostic(
                level=DiagnosticLevel.INFO,
                message=f"a permission hook already resolved request {request_id}",
            )
            return [self._emit(event, note, {RAW_KEY: dict(event)})]
        tool_id = as_str(prompt, "toolCallId")
        asked = permission_tool(prompt, self._tools.get(tool_id), f"permission-{request_id}")
        self._tools[asked.tool.id] = asked.tool
        request = PermissionRequest(
            id=request_id, tool=asked.tool, options=asked.options, detail=asked.detail
        )
        extensions: dict[str, object] = {"copilot/permission_kind": as_str(prompt, "kind")}
        if asked.session_approval is not None:
            extensions["copilot/session_approval"] = asked.session_approval
        return [self._asked(event, request, extensions)]

    def _user_input_requested(self, event: Json, data: Json) -> list[DriverEvent]:
        choices = data.get("choices")
        offered = [c for c in choices if isinstance(c, str)] if isinstance(choices, list) else []
        question = Question(
            id="answer",
            text=as_str(data, "question"),
            choices=tuple(Choice(id=str(i), label=c) for i, c in enumerate(offered)),
            # Copilot's default is free text allowed; with no choices it is the only way.
            allows_free_text=data.get("allowFreeform") is not False or not offered,
        )
        request = QuestionRequest(id=as_str(data, "requestId"), questions=(question,))
        extensions = (
            {"copilot/tool_call_id": as_str(data, "toolCallId")} if "toolCallId" in data else {}
        )
        return [self._asked(event, request, extensions)]

    def _withdrawn(self, event: Json, data: Json) -> list[DriverEvent]:
        return [RequestWithdrawn(as_str(data, "requestId"))]
