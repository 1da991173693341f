"""Gemini CLI's own session files, read back as a replay (for `corral import`).

What flows in: one `~/.gemini/tmp/<project>/chats/session-*.jsonl`, as
Gemini CLI 0.61 writes it (recorded from the real CLI against the mock
model: tests/fixtures/gemini/). What flows out, in conversation order: a
`PromptSent` for each prompt the user typed, then the agent's text,
thoughts and tool calls as DriverEvents.

The file is a log of upserts, not of events:

- a header line (`sessionId`, `projectHash`, `startTime`): once per start
  of the CLI, so a resumed session repeats it;
- a message line (`id`, `timestamp`, `type`: `user`, `gemini`, `info`,
  `warning`, `error`): the message as it is now. The same id comes again
  when the message grows (a `gemini` message gets its `toolCalls` once
  they ran), so the last line of an id wins, at the place of its first;
- a `{"$set": {...}}` line: fields of the session. On a resume,
  `$set.messages` restates the whole history in the API's own shape
  (`functionCall` parts, no tool results or statuses); messages already
  known keep their richer line, and only unknown ones are added.

Hence the reader reads the whole file before it yields (sessions are
small; a line that is not JSON, a torn last line above all, is reported
as a Warning `Diagnostic` after the conversation). Skipped:
the `<session_context>` message the CLI sends first (its own setup, not
the user's), and `user` messages that only carry `functionResponse` parts
(a tool's result, already in the call). Turns end where the next prompt
starts, or at the end of the file: the replay infers them, as the file has
no turn-end marker.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...pipeline.driver import Emitted, PromptSent, ReplayItem
from ...pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    MessageEnded,
    RawTool,
    ReasoningDelta,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from .._timestamps import iso_ns
from ._native_tools import native_tool_input

__all__ = ["read_gemini_session", "recognizes_gemini_line"]

_CONTEXT_PREFIX = "<session_context>"
_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "warning", "error"})
# Gemini CLI's built-in tools: kind, and the argument that names what they act on.
_TOOLS: dict[str, tuple[ToolKind, str]] = {
    "run_shell_command": (ToolKind.EXECUTE, "command"),
    "read_file": (ToolKind.READ, "file_path"),
    "read_many_files": (ToolKind.READ, ""),
    "list_directory": (ToolKind.READ, "dir_path"),
    "write_file": (ToolKind.EDIT, "file_path"),
    "replace": (ToolKind.EDIT, "file_path"),
    "glob": (ToolKind.SEARCH, "pattern"),
    "search_file_content": (ToolKind.SEARCH, "pattern"),
    "grep": (ToolKind.SEARCH, "pattern"),
    "web_fetch": (ToolKind.FETCH, "prompt"),
    "google_web_search": (ToolKind.FETCH, "query"),
}
_STATUSES = {
    "success": ToolStatus.COMPLETED,
    "error": ToolStatus.FAILED,
    "cancelled": ToolStatus.CANCELLED,
}
_LEVELS = {
    "info": DiagnosticLevel.INFO,
    "warning": DiagnosticLevel.WARNING,
    "error": DiagnosticLevel.ERROR,
}


def recognizes_gemini_line(value: Mapping[str, Any], path: Path) -> bool:
    """A Gemini chat's header line: a session id, a project hash and a start time."""
    return (
        isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
        and "startTime" in value
    )


def _parts(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return [part for part in content if isinstance(part, dict)]
    return []


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(p["text"] for p in parts if isinstance(p.get("text"), str))


class _Session:
    """The file's messages by id, in first-seen order; the results of tool calls by call id."""

    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.results: dict[str, str] = {}
        self.problems: list[Emitted] = []

    def line(self, value: dict[str, Any]) -> None:
        changes = value.get("$set")
        if isinstance(changes, dict):
            for message in changes.get("messages") or ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self.messages.setdefault(message["id"], message)
                    self._results(message)
            return
        if isinstance(value.get("id"), str) and value.get("type") in _MESSAGE_TYPES:
            self.messages[value["id"]] = value  # a later line of an id is its newer state
            self._results(value)

    def _results(self, message: Mapping[str, Any]) -> None:
        for part in _parts(message.get("content")):
            response = part.get("functionResponse")
            if isinstance(response, dict) and isinstance(response.get("id"), str):
                output = response.get("response")
                if isinstance(output, dict) and isinstance(output.get("output"), str):
                    self.results.setdefault(response["id"], output["output"])


def _decode(data: bytes, session: _Session) -> None:
    lines = data.split(b"\n")
    for number, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            torn = number == len(lines) - 1
            why = "its last line is torn (cut off mid-write)" if torn else "a line is not JSON"
            note = Diagnostic(level=DiagnosticLevel.WARNING, message=f"the Gemini chat: {why}")
            session.problems.append(
                Emitted(
                    kind=note, extensions={"gemini/raw_line": raw[:200].decode(errors="replace")}
                )
            )
            continue
        if isinstance(value, dict):
            session.line(value)


def _tool(call: Mapping[str, Any], status: ToolStatus, output: str | None) -> ToolUpdated:
    name = str(call.get("name") or "tool")
    args = call.get("args")
    args = args if isinstance(args, dict) else {}
    kind, key = _TOOLS.get(name, (ToolKind.OTHER, ""))
    title = call.get("description") or call.get("displayName") or name
    return ToolUpdated(
        ToolUpdate(
            id=str(call.get("id") or name),
            kind=kind,
            title=str(title),
            status=status,
            input=native_tool_input(kind, key, args, ("dir_path", "directory")),
            output=output,
            raw=RawTool(name=name, input=args),
        )
    )


def _tool_calls(message: Mapping[str, Any], results: Mapping[str, str]) -> Iterator[Emitted]:
    for call in message.get("toolCalls") or ():  # the CLI's own record: status and display
        if isinstance(call, dict):
            status = _STATUSES.get(str(call.get("status")), ToolStatus.COMPLETED)
            shown = call.get("resultDisplay")
            output = shown if isinstance(shown, str) else results.get(str(call.get("id")))
            yield Emitted(kind=_tool(call, status, output))
    for part in _parts(message.get("content")):  # a restated history: API parts only
        call = part.get("functionCall")
        if isinstance(call, dict):
            output = results.get(str(call.get("id")))
            status = ToolStatus.PENDING if output is None else ToolStatus.COMPLETED
            yield Emitted(kind=_tool(call, status, output))


def _agent_message(
    message_id: str, message: Mapping[str, Any], results: Mapping[str, str]
) -> Iterator[ReplayItem]:
    for thought in message.get("thoughts") or ():
        if isinstance(thought, dict):
            text = "\n\n".join(
                str(thought[k]) for k in ("subject", "description") if thought.get(k)
            )
            if text:
                yield Emitted(kind=ReasoningDelta(message_id=f"{message_id}/thought", text=text))
    text = _text(_parts(message.get("content")))
    if text:
        yield Emitted(kind=TextDelta(message_id=message_id, text=text))
        yield Emitted(kind=MessageEnded(message_id))
    yield from _tool_calls(message, results)


def _items(session: _Session) -> Iterator[ReplayItem]:
    for message_id, message in session.messages.items():
        kind = message.get("type")
        if kind == "user":
            text = _text(_parts(message.get("content")))
            if text and not text.startswith(_CONTEXT_PREFIX):
                yield PromptSent(text=text, at_ns=iso_ns(message.get("timestamp")))
        elif kind == "gemini":
            yield from _agent_message(message_id, message, session.results)
        elif kind in _LEVELS:
            text = _text(_parts(message.get("content")))
            yield Emitted(kind=Diagnostic(level=_LEVELS[str(kind)], message=text or str(kind)))
    yield from session.problems  # at the end, where a torn last line was


def read_gemini_session(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in conversation order; OSError if unreadable."""
    session = _Session()
    _decode(Path(path).read_bytes(), session)
    yield from _items(session)
