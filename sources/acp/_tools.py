"""ACP tool calls as cumulative `ToolUpdate` snapshots.

ACP announces a tool call with `tool_call` (the whole call) and changes it
with `tool_call_update` (only the fields that changed; `content` and
`locations` replace their collections). corral's `ToolUpdated` is always a
whole snapshot, so `ToolBook` keeps each call's ACP fields, merges every
update into them, and renders a fresh `ToolUpdate` each time.

Rendering: ACP kinds map 1:1 (`switch_mode` → Other); statuses map
pending/in_progress/completed/failed → Pending/Running/Completed/Failed;
`diff` content → `FileDiff`; text content (and a string `rawOutput`) →
`output`; `terminal` content (a terminal corral runs for the agent) shows
that terminal's output so far (`terminal_text`, set by the driver; the
last output seen is kept once the terminal is released, and
`terminal_exited` re-renders the calls that show a terminal that ended);
`locations` → paths (`path:line` when a line is given); the input is
read from `rawInput` by kind (a command, a path, a pattern, a URL), and
`rawInput` itself rides in `raw` with the agent's tool name when it says
one. A permission request may be the first news of a call (Gemini sends
no `tool_call` first): it is merged the same way.

Pure data in, data out: no I/O (`terminal_text` only reads a buffer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ...pipeline.events import (
    CommandInput,
    FileDiff,
    NoInput,
    PathInput,
    PatternInput,
    QueryInput,
    RawTool,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from .._tools import first_text

__all__ = ["TerminalText", "ToolBook"]

TerminalText = Callable[[str], str | None]


def _no_terminals(terminal_id: str) -> str | None:
    return None


_KINDS = {
    "read": ToolKind.READ,
    "edit": ToolKind.EDIT,
    "delete": ToolKind.DELETE,
    "move": ToolKind.MOVE,
    "search": ToolKind.SEARCH,
    "execute": ToolKind.EXECUTE,
    "think": ToolKind.THINK,
    "fetch": ToolKind.FETCH,
    "switch_mode": ToolKind.OTHER,
    "other": ToolKind.OTHER,
}
_STATUSES = {
    "pending": ToolStatus.PENDING,
    "in_progress": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
}
_PATH_KEYS = ("path", "file_path", "filePath", "absolute_path", "filename", "file", "notebook_path")
_PATTERN_KEYS = ("pattern", "glob", "regex")
_QUERY_KEYS = ("query", "q", "search")
_URL_KEYS = ("url", "uri")


@attrs.define(kw_only=True)
class _Call:
    """One tool call's ACP fields, as merged so far."""

    id: str
    title: str = ""
    kind: str | None = None
    status: str | None = None
    content: list[Any] = attrs.field(factory=list)
    locations: list[Any] = attrs.field(factory=list)
    raw_input: Any = None
    raw_output: Any = None
    name: str | None = None
    cancelled: bool = False
    refused: bool = False  # its permission was denied or withdrawn
    terminal_texts: dict[str, str] = attrs.field(factory=dict)  # last output seen per terminal
    shown_output: str | None = None


def _merge(call: _Call, fields: Mapping[str, Any]) -> None:
    if isinstance(title := fields.get("title"), str):
        call.title = title
    if isinstance(kind := fields.get("kind"), str):
        call.kind = kind
    if isinstance(status := fields.get("status"), str):
        call.status = status
    if isinstance(content := fields.get("content"), list):
        call.content = list(content)
    if isinstance(locations := fields.get("locations"), list):
        call.locations = list(locations)
    raw_input = fields.get("rawInput")
    if isinstance(raw_input, dict) and isinstance(call.raw_input, dict):
        call.raw_input = {**call.raw_input, **raw_input}  # a permission's view may be partial
    elif raw_input is not None:
        call.raw_input = raw_input
    if (raw_output := fields.get("rawOutput")) is not None:
        call.raw_output = raw_output
    name = _tool_name(fields)
    if name is not None:
        call.name = name


def _tool_name(fields: Mapping[str, Any]) -> str | None:
    """The agent's own tool name: `name`, or one an adapter puts in `_meta`."""
    if isinstance(fields.get("name"), str):
        return str(fields["name"])
    meta = fields.get("_meta")
    if isinstance(meta, dict):
        for value in meta.values():
            if isinstance(value, dict) and isinstance(value.get("toolName"), str):
                return str(value["toolName"])
    return None


def _command(raw: Mapping[str, Any]) -> CommandInput | None:
    command = raw.get("command", raw.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = " ".join(command)
    if not isinstance(command, str) or not command:
        return None
    cwd = raw.get("cwd", raw.get("workdir"))
    return CommandInput(command=command, cwd=cwd if isinstance(cwd, str) else None)


def _input(call: _Call, kind: ToolKind, locations: tuple[str, ...]) -> ToolInput:
    found = _input_of(kind, call.raw_input, locations)
    if isinstance(found, NoInput) and kind is ToolKind.EXECUTE and call.title:
        # Gemini sends no rawInput; its execute title is the command line itself.
        return CommandInput(command=call.title)
    return found


def _input_of(kind: ToolKind, raw_input: Any, locations: tuple[str, ...]) -> ToolInput:
    if isinstance(raw_input, dict):
        if kind is ToolKind.EXECUTE and (command := _command(raw_input)) is not None:
            return command
        if kind is ToolKind.FETCH and (url := first_text(raw_input, *_URL_KEYS)):
            return UrlInput(url)
        if kind is ToolKind.SEARCH:
            if pattern := first_text(raw_input, *_PATTERN_KEYS):
                return PatternInput(pattern)
            if query := first_text(raw_input, *_QUERY_KEYS):
                return QueryInput(query)
        if path := first_text(raw_input, *_PATH_KEYS):
            return PathInput(path)
        if kind is ToolKind.EXECUTE or "command" in raw_input:
            command = _command(raw_input)
            if command is not None:
                return command
    if locations and kind in (ToolKind.READ, ToolKind.EDIT, ToolKind.DELETE, ToolKind.MOVE):
        return PathInput(locations[0].rsplit(":", 1)[0] if ":" in locations[0] else locations[0])
    return NoInput()


def _location(raw: object) -> str | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
        return None
    line = raw.get("line")
    return f"{raw['path']}:{line}" if isinstance(line, int) else str(raw["path"])


def _text_of(block: Mapping[str, Any]) -> str | None:
    inner = block.get("content")
    if isinstance(inner, dict) and inner.get("type") == "text":
        text = inner.get("text")
        return text if isinstance(text, str) else None
    return None


def _terminal_id(block: object) -> str | None:
    if isinstance(block, dict) and block.get("type") == "terminal":
        terminal_id = block.get("terminalId")
        return terminal_id if isinstance(terminal_id, str) else None
    return None


def _terminal_output(call: _Call, terminal_id: str, terminal_text: TerminalText) -> str | None:
    live = terminal_text(terminal_id)
    if live is not None:
        call.terminal_texts[terminal_id] = live
    return call.terminal_texts.get(terminal_id)


def _output(call: _Call, terminal_text: TerminalText) -> str | None:
    texts = []
    shown: set[str] = set()
    for block in call.content:
        if not isinstance(block, dict):
            continue
        if text := _text_of(block):
            texts.append(text)
        elif (terminal_id := _terminal_id(block)) is not None:
            shown.add(terminal_id)
            if output := _terminal_output(call, terminal_id, terminal_text):
                texts.append(output)
    if call.terminal_texts:
        for gone in set(call.terminal_texts) - shown:
            del call.terminal_texts[gone]
    if texts:
        return "\n".join(texts)
    raw = call.raw_output
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        for key in ("output", "stdout", "formatted_output", "aggregated_output", "content"):
            if isinstance(raw.get(key), str):
                return str(raw[key])
    return None


def _diffs(call: _Call) -> tuple[FileDiff, ...]:
    if not call.content:
        return ()
    diffs = []
    for block in call.content:
        if not isinstance(block, dict) or block.get("type") != "diff":
            continue
        path, new_text, old_text = block.get("path"), block.get("newText"), block.get("oldText")
        if isinstance(path, str) and isinstance(new_text, str):
            diffs.append(
                FileDiff(
                    path=path,
                    new_text=new_text,
                    old_text=old_text if isinstance(old_text, str) else None,
                )
            )
    return tuple(diffs)


def _status(call: _Call) -> ToolStatus:
    if call.cancelled:
        return ToolStatus.CANCELLED
    return _STATUSES.get(call.status or "", ToolStatus.PENDING)


def render(call: _Call, terminal_text: TerminalText = _no_terminals) -> ToolUpdate:
    kind = _KINDS.get(call.kind or "other", ToolKind.OTHER)
    locations = (
        tuple(loc for raw in call.locations if (loc := _location(raw)) is not None)
        if call.locations
        else ()
    )
    raw = None
    if call.raw_input is not None or call.name is not None:
        raw = RawTool(name=call.name or call.title or call.kind or "tool", input=call.raw_input)
    call.shown_output = _output(call, terminal_text)
    return ToolUpdate(
        id=call.id,
        kind=kind,
        title=call.title or call.name or call.id,
        status=_status(call),
        input=_input(call, kind, locations),
        output=call.shown_output,
        diffs=_diffs(call),
        locations=locations,
        raw=raw,
    )


class ToolBook:
    """Every tool call of one session, merged; hands out snapshots."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}
        self.terminal_text: TerminalText = _no_terminals

    def _render(self, call: _Call) -> ToolUpdate:
        return render(call, self.terminal_text)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._calls

    def started(self, fields: Mapping[str, Any]) -> ToolUpdate | None:
        """`tool_call`: the whole call (a repeated id is treated as an update)."""
        tool_id = fields.get("toolCallId")
        if not isinstance(tool_id, str):
            return None
        call = self._calls.get(tool_id)
        if call is None:
            call = self._calls[tool_id] = _Call(id=tool_id)
        _merge(call, fields)
        return self._render(call)

    def updated(self, fields: Mapping[str, Any]) -> ToolUpdate | None:
        """`tool_call_update` (or a permission request's `toolCall`): merge the changes."""
        return self.started(fields)

    def snapshot(self, tool_id: str) -> ToolUpdate | None:
        call = self._calls.get(tool_id)
        return None if call is None else self._render(call)

    def cancel_open(self) -> list[ToolUpdate]:
        """Mark every unfinished call cancelled (the turn was cancelled); their snapshots."""
        out = []
        for call in self._calls.values():
            if _status(call).finished:
                continue
            call.cancelled = True
            out.append(self._render(call))
        return out

    def refuse(self, tool_id: str) -> None:
        """Its permission was denied: unless the agent says otherwise, it never ran."""
        call = self._calls.get(tool_id)
        if call is not None:
            call.refused = True

    def settle_refused(self) -> list[ToolUpdate]:
        """At turn end: refused calls the agent left unfinished are shown Cancelled."""
        out = []
        for call in self._calls.values():
            if call.refused and not _status(call).finished:
                call.cancelled = True
                out.append(self._render(call))
        return out

    def forget_finished(self) -> None:
        """Drop finished calls so a long session holds only the live ones."""
        for tool_id in [t for t, call in self._calls.items() if _status(call).finished]:
            del self._calls[tool_id]

    def showing(self, terminal_id: str) -> list[str]:
        """The unfinished calls that show this terminal."""
        return [
            tool_id
            for tool_id, call in self._calls.items()
            if not _status(call).finished
            and any(_terminal_id(block) == terminal_id for block in call.content)
        ]

    def terminal_exited(self, terminal_id: str) -> list[ToolUpdate]:
        """Calls that show this terminal, re-rendered where its final output changed them."""
        out = []
        for call in self._calls.values():
            if not any(_terminal_id(block) == terminal_id for block in call.content):
                continue
            before = call.shown_output
            tool = self._render(call)
            if tool.output != before:
                out.append(tool)
        return out
