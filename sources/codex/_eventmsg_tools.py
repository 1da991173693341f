"""Codex `EventMsg` tool events → ToolUpdate snapshots and requests (sans-IO).

In: the snake_case payloads of the core's tool events (seed
`codex-eventmsg.schema.json`). Out: cumulative `ToolUpdate`s keyed by
`call_id`, `ToolOutputDelta`s, and the approval / question requests as
`RequestAsked`. `ToolBook` keeps the snapshot of every unfinished tool so
an end event only needs to change what it knows, and so a turn that is
aborted can end them all Cancelled.

| EventMsg | becomes |
|---|---|
| exec_command_begin / _output_delta / _end | Execute (output deltas are base64 bytes) |
| patch_apply_begin / _end | Edit / Delete / Move with diffs |
| mcp_tool_call_begin / _end | Mcp{server, tool} |
| web_search_begin / _end | Search (Fetch for an opened page) |
| view_image_tool_call | Read, completed |
| dynamic_tool_call_request | Other, running |
| collab_*_begin / _end | Subagent |
| exec_approval_request, apply_patch_approval_request | Permission request |
| request_user_input, elicitation_request | Question request |
"""

from __future__ import annotations

import base64
import binascii
import codecs
import shlex

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    CommandInput,
    Fields,
    FileDiff,
    Mcp,
    PathInput,
    QueryInput,
    RawTool,
    ShapeError,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UrlInput,
)
from .._snapshots import tool_ended
from ._items import FileChanges, edit_title, mcp_content_text

__all__ = [
    "ToolBook",
    "chunk_bytes",
    "command_line",
    "command_title",
    "decode_chunk",
    "diffs_of",
    "exec_tool",
    "patch_tool",
]

_MAX_OUTPUT = 256 * 1024
_STATUS = {
    "in_progress": ToolStatus.RUNNING,
    "inProgress": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "declined": ToolStatus.FAILED,
    "interrupted": ToolStatus.CANCELLED,
}


def chunk_bytes(chunk: str, path: str = "chunk") -> bytes:
    """An output chunk's bytes. Raises ShapeError when it is not base64.

    The seed schema's `chunk` is the stream's "raw bytes (may not be valid
    UTF-8)" in a JSON string; Codex writes them base64 (serde_with's
    `Base64` on a `Vec<u8>`). So every chunk is decoded: plain output such
    as "abcd" reaches us as "YWJjZA==", and a string that happens to be
    valid base64 is never mistaken for text, nor the other way round.
    """
    try:
        return base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError):
        raise ShapeError(path, "not base64") from None


def decode_chunk(chunk: str, path: str = "chunk") -> str:
    """One chunk's text on its own (invalid UTF-8 becomes U+FFFD)."""
    return chunk_bytes(chunk, path).decode("utf-8", errors="replace")


_Utf8 = codecs.getincrementaldecoder("utf-8")


def command_line(payload: Fields) -> str:
    raw = payload.raw.get("command")
    if isinstance(raw, list):
        return shlex.join(str(part) for part in raw)
    return str(raw or "")


def command_title(payload: Fields, command: str) -> str:
    parsed = []
    for path, raw in payload.array("parsed_cmd", True):
        text = Fields(raw, path).opt_string("cmd")
        if text:
            parsed.append(text)
    return " && ".join(parsed) or command


def exec_tool(payload: Fields, status: ToolStatus) -> ToolUpdate:
    """The command an `exec_*` event (or its approval request) is about."""
    command = command_line(payload)
    return ToolUpdate(
        id=payload.string("call_id"),
        kind=ToolKind.EXECUTE,
        title=command_title(payload, command),
        status=status,
        input=CommandInput(command=command, cwd=payload.opt_string("cwd")),
    )


def patch_tool(payload: Fields, status: ToolStatus) -> ToolUpdate:
    """The edit a `patch_*` event (or its approval request) is about, from its `changes`."""
    diffs, locations, kind = diffs_of(payload.obj("changes"))
    return ToolUpdate(
        id=payload.string("call_id"),
        kind=kind,
        title=edit_title(kind, [d.path for d in diffs]),
        status=status,
        diffs=tuple(diffs),
        locations=tuple(locations),
    )


def diffs_of(changes: Fields) -> tuple[list[FileDiff], list[str], ToolKind]:
    gathered = FileChanges()
    for path, raw in changes.raw.items():
        change = Fields(raw, f"{changes.path}.{path}")
        change_type = change.string("type")
        text = change.opt_string("unified_diff") or change.opt_string("content") or ""
        gathered.add(path, change_type, text, change.opt_string("move_path"))
    return gathered.result()


class ToolBook:
    """Snapshots of the tools of one wire, by call id."""

    def __init__(self) -> None:
        self._live: dict[str, ToolUpdate] = {}
        self._outputs: dict[str, str] = {}
        # A command's output is one byte stream cut into chunks anywhere, even
        # inside a character: each command's bytes are decoded as one stream.
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}

    def _show(self, tool: ToolUpdate) -> list[DriverEvent]:
        shown: list[DriverEvent] = []
        if tool.status.finished:
            shown += self._output_rest(tool.id)
            self._live.pop(tool.id, None)
            self._outputs.pop(tool.id, None)
        else:
            self._live[tool.id] = tool
        shown.append(Emitted(kind=ToolUpdated(tool)))
        return shown

    def _output_delta(self, call_id: str, text: str) -> list[DriverEvent]:
        if not text:
            return []
        kept = self._outputs.get(call_id, "")
        self._outputs[call_id] = (kept + text)[:_MAX_OUTPUT]
        return [Emitted(kind=ToolOutputDelta(tool_id=call_id, text=text))]

    def _output_rest(self, call_id: str) -> list[DriverEvent]:
        """The command ended inside a character: what was held back, as U+FFFD."""
        decoder = self._decoders.pop(call_id, None)
        return [] if decoder is None else self._output_delta(call_id, decoder.decode(b"", True))

    def known(self, call_id: str, fallback: ToolUpdate) -> ToolUpdate:
        return self._live.get(call_id, fallback)

    def end_all(self, status: ToolStatus) -> list[DriverEvent]:
        ended: list[DriverEvent] = []
        for tool_id, tool in list(self._live.items()):
            output = self._outputs.get(tool_id) or tool.output
            ended += self._show(tool_ended(tool, status, output))
        return ended

    # ---- commands ------------------------------------------------------------------

    def exec_begin(self, payload: Fields) -> list[DriverEvent]:
        return self._show(exec_tool(payload, ToolStatus.RUNNING))

    def exec_output(self, payload: Fields) -> list[DriverEvent]:
        call_id = payload.string("call_id")
        raw = chunk_bytes(payload.string("chunk"), f"{payload.path}.chunk")
        decoder = self._decoders.get(call_id)
        if decoder is None:
            decoder = self._decoders[call_id] = _Utf8(errors="replace")
        return self._output_delta(call_id, decoder.decode(raw))

    def exec_end(self, payload: Fields) -> list[DriverEvent]:
        call_id = payload.string("call_id")
        begun = self.known(call_id, exec_tool(payload, ToolStatus.RUNNING))
        output = (
            payload.opt_string("aggregated_output")
            or payload.opt_string("formatted_output")
            or (payload.opt_string("stdout") or "") + (payload.opt_string("stderr") or "")
            or self._outputs.get(call_id)
        )
        exit_code = payload.raw.get("exit_code")
        status = ToolStatus.COMPLETED if exit_code == 0 else ToolStatus.FAILED
        return self._show(tool_ended(begun, status, output or None))

    def command_item(self, item: Fields) -> list[DriverEvent]:
        """A `CommandExecution` turn item (rollouts of newer Codex versions)."""
        command = command_line(item)
        cwd = item.opt_string("cwd")
        if cwd is not None and cwd.startswith("file://"):
            cwd = cwd[len("file://") :]
        return self._show(
            ToolUpdate(
                id=item.string("id"),
                kind=ToolKind.EXECUTE,
                title=command_title(item, command),
                status=_STATUS.get(item.opt_string("status") or "", ToolStatus.COMPLETED),
                input=CommandInput(command=command, cwd=cwd),
                output=item.opt_string("aggregated_output") or None,
            )
        )

    # ---- patches -------------------------------------------------------------------

    def patch_begin(self, payload: Fields) -> list[DriverEvent]:
        return self._show(patch_tool(payload, ToolStatus.RUNNING))

    def patch_end(self, payload: Fields, *, status_field: str = "success") -> list[DriverEvent]:
        call_id = payload.string("call_id")
        tool = self._live.get(call_id)
        if payload.has("changes"):
            tool = patch_tool(payload, ToolStatus.RUNNING)
        if tool is None:
            tool = ToolUpdate(
                id=call_id, kind=ToolKind.EDIT, title="Edit", status=ToolStatus.RUNNING
            )
        if status_field == "success":
            ok = payload.flag("success", False)
            status = ToolStatus.COMPLETED if ok else ToolStatus.FAILED
        else:
            status = _STATUS.get(payload.opt_string("status") or "", ToolStatus.COMPLETED)
        output = (payload.opt_string("stdout") or "") + (payload.opt_string("stderr") or "")
        return self._show(tool_ended(tool, status, output or None))

    # ---- MCP, search, images, dynamic tools, subagents -----------------------------

    def mcp(self, payload: Fields, *, finished: bool) -> list[DriverEvent]:
        invocation = payload.obj("invocation")
        server, tool = invocation.string("server"), invocation.string("tool")
        status, output = ToolStatus.RUNNING, None
        if finished:
            result = payload.obj("result")
            if result.has("Err"):
                status, output = ToolStatus.FAILED, str(result.raw["Err"])
            else:
                ok = result.obj("Ok")
                failed = ok.raw.get("isError") is True
                status = ToolStatus.FAILED if failed else ToolStatus.COMPLETED
                output = mcp_content_text(ok.raw.get("content"))
        return self._show(
            ToolUpdate(
                id=payload.string("call_id"),
                kind=Mcp(server=server, tool=tool),
                title=f"{server}.{tool}",
                status=status,
                output=output,
                raw=RawTool(name=tool, input=invocation.raw.get("arguments")),
            )
        )

    def web_search(self, payload: Fields, *, finished: bool) -> list[DriverEvent]:
        call_id = payload.opt_string("call_id") or payload.string("id")
        query = payload.opt_string("query") or ""
        action = payload.opt_obj("action")
        url = None if action is None else action.opt_string("url")
        return self._show(
            ToolUpdate(
                id=call_id,
                kind=ToolKind.SEARCH if url is None else ToolKind.FETCH,
                title=query or url or "Web search",
                status=ToolStatus.COMPLETED if finished else ToolStatus.RUNNING,
                input=UrlInput(url) if url is not None else QueryInput(query),
            )
        )

    def view_image(self, payload: Fields) -> list[DriverEvent]:
        path = payload.string("path")
        return self._show(
            ToolUpdate(
                id=payload.string("call_id"),
                kind=ToolKind.READ,
                title=f"View {path}",
                status=ToolStatus.COMPLETED,
                input=PathInput(path),
                locations=(path,),
            )
        )

    def dynamic(self, payload: Fields) -> list[DriverEvent]:
        tool = payload.string("tool")
        return self._show(
            ToolUpdate(
                id=payload.string("callId"),
                kind=ToolKind.OTHER,
                title=tool,
                status=ToolStatus.RUNNING,
                raw=RawTool(name=tool, input=payload.raw.get("arguments")),
            )
        )

    def collab(self, event_type: str, payload: Fields) -> list[DriverEvent]:
        action = event_type.removeprefix("collab_").rsplit("_", 1)[0]  # agent_spawn, waiting...
        finished = event_type.endswith("_end")
        status = ToolStatus.COMPLETED if finished else ToolStatus.RUNNING
        raw_status = payload.raw.get("status")  # the subagent's, not the call's
        if finished and (
            raw_status == "not_found" or (isinstance(raw_status, dict) and "errored" in raw_status)
        ):
            status = ToolStatus.FAILED
        prompt = payload.opt_string("prompt")
        return self._show(
            ToolUpdate(
                id=payload.string("call_id"),
                kind=ToolKind.SUBAGENT,
                title=f"{action}: {prompt}" if prompt else action,
                status=status,
                raw=RawTool(name=action, input={"prompt": prompt}),
            )
        )
