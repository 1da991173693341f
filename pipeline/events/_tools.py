"""Tool calls: what the agent is doing, as cumulative snapshots.

A `ToolUpdate` is the whole current picture of one tool call (kind, input,
status, output, diffs); every change sends a fresh snapshot, so a consumer
that joins late needs only the last one. JSON shapes follow the line-protocol
schema exactly: unit variants are bare strings, data variants are one-key
objects, optional fields are written as null.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from ._shape import Fields, ShapeError, as_str, tag_of

__all__ = [
    "CommandInput",
    "FileDiff",
    "Mcp",
    "NoInput",
    "PathInput",
    "PatternInput",
    "QueryInput",
    "RawTool",
    "TextInput",
    "ToolInput",
    "ToolKind",
    "ToolStatus",
    "ToolUpdate",
    "UrlInput",
    "tool_input_from_wire",
    "tool_kind_from_wire",
    "tool_kind_to_wire",
]

JsonValue = Any  # a decoded JSON value kept verbatim (raw provider data)


class ToolKind(enum.StrEnum):
    READ = "Read"
    EDIT = "Edit"
    DELETE = "Delete"
    MOVE = "Move"
    SEARCH = "Search"
    EXECUTE = "Execute"
    FETCH = "Fetch"
    THINK = "Think"
    OTHER = "Other"
    SUBAGENT = "Subagent"


@attrs.frozen(kw_only=True)
class Mcp:
    """A tool served by an MCP server."""

    server: str
    tool: str


def tool_kind_to_wire(kind: ToolKind | Mcp) -> object:
    if isinstance(kind, Mcp):
        return {"Mcp": {"server": kind.server, "tool": kind.tool}}
    return kind.value


_TOOL_KINDS = {kind.value: kind for kind in ToolKind}


def tool_kind_from_wire(raw: object, path: str) -> ToolKind | Mcp:
    tag, payload = tag_of(raw, path, frozenset(_TOOL_KINDS))
    if payload is None:
        return _TOOL_KINDS[tag]
    if tag != "Mcp":
        raise ShapeError(path, f"unknown tool kind {tag!r}")
    fields = Fields(payload, f"{path}.Mcp")
    return Mcp(server=fields.string("server"), tool=fields.string("tool"))


class ToolStatus(enum.StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def finished(self) -> bool:
        return self in (ToolStatus.COMPLETED, ToolStatus.FAILED, ToolStatus.CANCELLED)


@attrs.frozen
class NoInput:
    def to_wire(self) -> object:
        return "None"


@attrs.frozen
class PathInput:
    path: str

    def to_wire(self) -> object:
        return {"Path": self.path}


@attrs.frozen(kw_only=True)
class CommandInput:
    command: str
    cwd: str | None = None

    def to_wire(self) -> object:
        return {"Command": {"command": self.command, "cwd": self.cwd}}


@attrs.frozen
class PatternInput:
    pattern: str

    def to_wire(self) -> object:
        return {"Pattern": self.pattern}


@attrs.frozen
class UrlInput:
    url: str

    def to_wire(self) -> object:
        return {"Url": self.url}


@attrs.frozen
class QueryInput:
    query: str

    def to_wire(self) -> object:
        return {"Query": self.query}


@attrs.frozen
class TextInput:
    text: str

    def to_wire(self) -> object:
        return {"Text": self.text}


ToolInput = NoInput | PathInput | CommandInput | PatternInput | UrlInput | QueryInput | TextInput

_SINGLE_STRING_INPUTS: dict[str, type[PathInput | PatternInput | UrlInput | QueryInput | TextInput]]
_SINGLE_STRING_INPUTS = {
    "Path": PathInput,
    "Pattern": PatternInput,
    "Url": UrlInput,
    "Query": QueryInput,
    "Text": TextInput,
}


def tool_input_from_wire(raw: object, path: str) -> ToolInput:
    tag, payload = tag_of(raw, path, frozenset({"None"}))
    if payload is None:
        return NoInput()
    if tag == "Command":
        fields = Fields(payload, f"{path}.Command")
        return CommandInput(command=fields.string("command"), cwd=fields.opt_string("cwd"))
    if tag in _SINGLE_STRING_INPUTS:
        return _SINGLE_STRING_INPUTS[tag](as_str(payload, f"{path}.{tag}"))
    raise ShapeError(path, f"unknown tool input {tag!r}")


@attrs.frozen(kw_only=True)
class FileDiff:
    path: str
    new_text: str
    old_text: str | None = None  # None means a new file

    def to_wire(self) -> dict[str, object]:
        return {"path": self.path, "old_text": self.old_text, "new_text": self.new_text}

    @classmethod
    def from_wire(cls, raw: object, path: str) -> FileDiff:
        fields = Fields(raw, path)
        return cls(
            path=fields.string("path"),
            old_text=fields.opt_string("old_text"),
            new_text=fields.string("new_text"),
        )


@attrs.frozen(kw_only=True)
class RawTool:
    """The agent's own tool name and input, for unknown or MCP tools."""

    name: str
    input: JsonValue = None

    def to_wire(self) -> dict[str, object]:
        return {"name": self.name, "input": self.input}


@attrs.frozen(kw_only=True)
class ToolUpdate:
    """Cumulative snapshot of one tool call."""

    id: str
    kind: ToolKind | Mcp
    title: str
    status: ToolStatus
    input: ToolInput = NoInput()
    output: str | None = None
    diffs: tuple[FileDiff, ...] = ()
    locations: tuple[str, ...] = ()
    raw: RawTool | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": tool_kind_to_wire(self.kind),
            "title": self.title,
            "status": self.status.value,
            "input": self.input.to_wire(),
            "output": self.output,
            "diffs": [diff.to_wire() for diff in self.diffs],
            "locations": list(self.locations),
            "raw": None if self.raw is None else self.raw.to_wire(),
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> ToolUpdate:
        fields = Fields(raw, path)
        raw_tool = fields.opt_obj("raw")
        return cls(
            id=fields.string("id"),
            kind=tool_kind_from_wire(fields.value("kind"), f"{path}.kind"),
            title=fields.string("title"),
            status=fields.choice("status", {s.value: s for s in ToolStatus}),
            input=tool_input_from_wire(fields.value("input"), f"{path}.input"),
            output=fields.opt_string("output"),
            diffs=tuple(FileDiff.from_wire(item, p) for p, item in fields.array("diffs")),
            locations=fields.strings("locations"),
            raw=None
            if raw_tool is None
            else RawTool(name=raw_tool.string("name"), input=raw_tool.raw.get("input")),
        )
