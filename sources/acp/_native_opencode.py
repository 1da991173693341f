"""opencode's sessions as opencode exports them, read back as a replay (for `corral import`).

Where opencode keeps sessions: 1.18 (pinned by the tests: 1.18.33) keeps
them in a SQLite database (`~/.local/share/opencode/opencode.db`, tables
`session`, `message`, `part`), one database for every session, not in
session files. Its file form of one session is `opencode export
SESSION_ID`: one JSON document, `{"info": <session>, "messages": [{"info":
<message>, "parts": [<part>...]}...]}` (recorded from the real CLI against
the mock model: tests/fixtures/opencode/). That is what this reads.

What flows out, in message order: each `user` message's text parts (not
the `synthetic` ones opencode adds itself) as a `PromptSent` at the
message's creation time; each `assistant` message's parts as DriverEvents:
`text` (TextDelta, MessageEnded), `reasoning` (ReasoningDelta), `tool`
(ToolUpdated: the call's final state; opencode's own tool names give the
kind and input). Step markers, snapshots and patches carry nothing to
replay. An assistant message that finished (`finish: "stop"`) ends its
turn Completed; one that failed ends it Failed with opencode's message,
Cancelled when it was aborted. A turn left open is ended by the replay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...pipeline.driver import Emitted, PromptSent, ReplayItem, TurnFinished
from ...pipeline.events import (
    Cancelled,
    Completed,
    Failed,
    MessageEnded,
    RawTool,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from ._native_tools import native_tool_input

__all__ = ["read_opencode_export", "recognizes_opencode_export"]

# opencode's built-in tools: kind, and the argument that names what they act on.
_TOOLS: dict[str, tuple[ToolKind, str]] = {
    "bash": (ToolKind.EXECUTE, "command"),
    "read": (ToolKind.READ, "filePath"),
    "list": (ToolKind.READ, "path"),
    "write": (ToolKind.EDIT, "filePath"),
    "edit": (ToolKind.EDIT, "filePath"),
    "patch": (ToolKind.EDIT, ""),
    "glob": (ToolKind.SEARCH, "pattern"),
    "grep": (ToolKind.SEARCH, "pattern"),
    "webfetch": (ToolKind.FETCH, "url"),
    "task": (ToolKind.SUBAGENT, ""),
    "todowrite": (ToolKind.THINK, ""),
    "todoread": (ToolKind.THINK, ""),
}
_STATUSES = {
    "pending": ToolStatus.PENDING,
    "running": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "error": ToolStatus.FAILED,
}
_ABORTED = "MessageAbortedError"


def recognizes_opencode_export(value: Mapping[str, Any], path: Path) -> bool:
    """An `opencode export`: a session `info` (id, slug, version) and its `messages`."""
    info = value.get("info")
    return (
        isinstance(info, dict)
        and isinstance(info.get("id"), str)
        and "slug" in info
        and "version" in info
        and isinstance(value.get("messages"), list)
    )


def _ms_to_ns(info: Mapping[str, Any]) -> int | None:
    time = info.get("time")
    created = time.get("created") if isinstance(time, dict) else None
    return created * 1_000_000 if type(created) is int else None


def _tool(part: Mapping[str, Any]) -> ToolUpdated:
    name = str(part.get("tool") or "tool")
    state = part.get("state")
    state = state if isinstance(state, dict) else {}
    args = state.get("input")
    args = args if isinstance(args, dict) else {}
    kind, key = _TOOLS.get(name, (ToolKind.OTHER, ""))
    status = _STATUSES.get(str(state.get("status")), ToolStatus.PENDING)
    output = state.get("error") if status is ToolStatus.FAILED else state.get("output")
    return ToolUpdated(
        ToolUpdate(
            id=str(part.get("callID") or part.get("id") or name),
            kind=kind,
            title=str(state.get("title") or name),
            status=status,
            input=native_tool_input(kind, key, args, ("workdir",)),
            output=output if isinstance(output, str) else None,
            raw=RawTool(name=name, input=args),
        )
    )


def _part(part: Mapping[str, Any]) -> Iterator[Emitted]:
    kind, part_id = part.get("type"), str(part.get("id") or "")
    text = part.get("text")
    if kind == "text" and isinstance(text, str) and text and not part.get("synthetic"):
        yield Emitted(kind=TextDelta(message_id=part_id, text=text))
        yield Emitted(kind=MessageEnded(part_id))
    elif kind == "reasoning" and isinstance(text, str) and text:
        yield Emitted(kind=ReasoningDelta(message_id=part_id, text=text))
    elif kind == "tool":
        yield Emitted(kind=_tool(part))


def _stop(info: Mapping[str, Any]) -> StopReason | None:
    error = info.get("error")
    if isinstance(error, dict):
        if error.get("name") == _ABORTED:
            return Cancelled()
        data = error.get("data")
        message = data.get("message") if isinstance(data, dict) else None
        return Failed(message=str(message or error.get("name") or "opencode reported an error"))
    return Completed() if info.get("finish") == "stop" else None


def _prompt(message: Mapping[str, Any], info: Mapping[str, Any]) -> PromptSent | None:
    parts = message.get("parts")
    texts = [
        part["text"]
        for part in (parts if isinstance(parts, list) else ())
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
        and not part.get("synthetic")
    ]
    return PromptSent(text="\n".join(texts), at_ns=_ms_to_ns(info)) if texts else None


def _items(document: Mapping[str, Any]) -> Iterator[ReplayItem]:
    in_turn = False
    for message in document.get("messages") or ():
        info = message.get("info") if isinstance(message, dict) else None
        if not isinstance(info, dict):
            continue
        if info.get("role") == "user":
            prompt = _prompt(message, info)
            if prompt is not None:
                yield prompt
                in_turn = True
            continue
        for part in message.get("parts") or ():
            if isinstance(part, dict):
                yield from _part(part)
        stop = _stop(info)
        if stop is not None and in_turn:
            yield TurnFinished(stop=stop)
            in_turn = False


def read_opencode_export(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in message order; OSError or ValueError if unreadable."""
    document = orjson.loads(Path(path).read_bytes())
    if not isinstance(document, dict) or not recognizes_opencode_export(document, Path(path)):
        raise ValueError("not an opencode export (no session info and messages)")
    yield from _items(document)
