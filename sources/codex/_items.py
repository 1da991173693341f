"""App-server thread items that are tool calls, as corral `ToolUpdate`s.

In: one `ThreadItem` object (the `item` of `item/started` or
`item/completed`, camelCase, as `codex app-server generate-json-schema`
describes it) and whether it finished. Out: a cumulative `ToolUpdate`
snapshot, or None for items that are not tool calls (messages, reasoning,
plans, compaction: the normalizer handles those).

Mapping: commandExecution → Execute (input: the command line; title: the
commands Codex parsed out of the shell wrapper), fileChange → Edit / Delete
/ Move with diffs, mcpToolCall → Mcp{server, tool}, webSearch → Search,
dynamicToolCall and imageGeneration → Other, imageView → Read,
collabAgentToolCall → Subagent. Item statuses: inProgress → Running,
completed → Completed, failed and declined → Failed, interrupted →
Cancelled; items without a status are Running until they complete.
"""

from __future__ import annotations

from collections.abc import Callable

from ...pipeline.events import (
    CommandInput,
    Fields,
    FileDiff,
    Mcp,
    NoInput,
    PathInput,
    QueryInput,
    RawTool,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from ._common import file_diff

__all__ = ["TOOL_ITEM_TYPES", "FileChanges", "tool_update"]

_STATUS = {
    "inProgress": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "declined": ToolStatus.FAILED,
    "interrupted": ToolStatus.CANCELLED,
}


def _status(item: Fields, finished: bool) -> ToolStatus:
    raw = item.raw.get("status")
    if isinstance(raw, str) and raw in _STATUS:
        return _STATUS[raw]
    return ToolStatus.COMPLETED if finished else ToolStatus.RUNNING


def _command(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    command = item.string("command")
    parsed = []
    for path, action in item.array("commandActions", True):
        text = Fields(action, path).opt_string("command")
        if text:
            parsed.append(text)
    aggregated = item.opt_string("aggregatedOutput")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.EXECUTE,
        title=" && ".join(parsed) or command,
        status=_status(item, finished),
        input=CommandInput(command=command, cwd=item.opt_string("cwd")),
        output=aggregated if aggregated else output,
    )


class FileChanges:
    """Diffs, touched paths and the tool kind of one tool's file changes, gathered one by one.

    Both Codex wires describe a change as a path, a change type, a diff or
    whole content, and an optional destination; a moved file counts as a
    move, and the kind is Delete or Move only when every change is one.
    """

    def __init__(self) -> None:
        self._diffs: list[FileDiff] = []
        self._locations: list[str] = []
        self._types: set[str] = set()

    def add(self, path: str, change_type: str, text: str, moved_to: str | None) -> None:
        self._diffs.append(file_diff(path, change_type, text))
        self._locations.append(path)
        if moved_to:
            self._locations.append(moved_to)
            change_type = "move"
        self._types.add(change_type)

    def result(self) -> tuple[list[FileDiff], list[str], ToolKind]:
        return self._diffs, self._locations, _edit_kind(self._types)


def file_changes(changes: list[tuple[str, object]]) -> tuple[list[FileDiff], list[str], ToolKind]:
    """`FileUpdateChange`s → diffs, touched paths, and the tool kind they amount to."""
    gathered = FileChanges()
    for path, raw in changes:
        change = Fields(raw, path)
        kind = change.obj("kind")
        change_type = kind.string("type")
        file_path = change.string("path")
        text = change.opt_string("diff") or ""
        gathered.add(file_path, change_type, text, kind.opt_string("move_path"))
    return gathered.result()


def _edit_kind(kinds: set[str]) -> ToolKind:
    if kinds == {"delete"}:
        return ToolKind.DELETE
    if kinds == {"move"}:
        return ToolKind.MOVE
    return ToolKind.EDIT


def edit_title(kind: ToolKind, paths: list[str]) -> str:
    verb = {ToolKind.DELETE: "Delete", ToolKind.MOVE: "Move"}.get(kind, "Edit")
    return f"{verb} {', '.join(paths)}" if paths else verb


def _file_change(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    diffs, locations, kind = file_changes(item.array("changes", True))
    return ToolUpdate(
        id=item.string("id"),
        kind=kind,
        title=edit_title(kind, [d.path for d in diffs]),
        status=_status(item, finished),
        diffs=tuple(diffs),
        locations=tuple(locations),
        output=output,
    )


def mcp_content_text(content: object) -> str | None:
    """The text parts of an MCP result's content blocks, joined."""
    if not isinstance(content, list):
        return None
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def _mcp(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    server = item.string("server")
    tool = item.string("tool")
    result = item.opt_obj("result")
    error = item.opt_obj("error")
    if error is not None:
        output = error.opt_string("message") or output
    elif result is not None:
        output = mcp_content_text(result.raw.get("content")) or output
    return ToolUpdate(
        id=item.string("id"),
        kind=Mcp(server=server, tool=tool),
        title=f"{server}.{tool}",
        status=_status(item, finished),
        output=output,
        raw=RawTool(name=tool, input=item.raw.get("arguments")),
    )


def _web_search(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    query = item.opt_string("query") or ""
    action = item.opt_obj("action")
    url = None if action is None else action.opt_string("url")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.SEARCH if url is None else ToolKind.FETCH,
        title=query or url or "Web search",
        status=_status(item, finished),
        input=UrlInput(url) if url is not None else QueryInput(query),
    )


def _dynamic(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    tool = item.string("tool")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.OTHER,
        title=tool,
        status=_status(item, finished),
        output=mcp_content_text(item.raw.get("contentItems")) or output,
        raw=RawTool(name=tool, input=item.raw.get("arguments")),
    )


def _image_view(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    path = item.string("path")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.READ,
        title=f"View {path}",
        status=_status(item, finished),
        input=PathInput(path),
        locations=(path,),
    )


def _image_generation(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    saved = item.opt_string("savedPath")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.OTHER,
        title=item.opt_string("revisedPrompt") or "Generate an image",
        status=ToolStatus.COMPLETED if finished else ToolStatus.RUNNING,
        locations=() if saved is None else (saved,),
        raw=RawTool(name="imageGeneration", input=None),
    )


def _collab(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    tool = item.string("tool")
    prompt = item.opt_string("prompt")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.SUBAGENT,
        title=f"{tool}: {prompt}" if prompt else tool,
        status=_status(item, finished),
        input=NoInput(),
        raw=RawTool(
            name=tool,
            input={"prompt": prompt, "receiverThreadIds": item.raw.get("receiverThreadIds")},
        ),
    )


def _sleep(item: Fields, finished: bool, output: str | None) -> ToolUpdate:
    duration = item.raw.get("durationMs")
    return ToolUpdate(
        id=item.string("id"),
        kind=ToolKind.OTHER,
        title=f"Sleep {duration} ms" if isinstance(duration, int) else "Sleep",
        status=ToolStatus.COMPLETED if finished else ToolStatus.RUNNING,
    )


_Builder = Callable[[Fields, bool, "str | None"], ToolUpdate]

_BUILDERS: dict[str, _Builder] = {
    "commandExecution": _command,
    "fileChange": _file_change,
    "mcpToolCall": _mcp,
    "webSearch": _web_search,
    "dynamicToolCall": _dynamic,
    "imageView": _image_view,
    "imageGeneration": _image_generation,
    "collabAgentToolCall": _collab,
    "sleep": _sleep,
}

TOOL_ITEM_TYPES = frozenset(_BUILDERS)


def tool_update(item: Fields, *, finished: bool, output: str | None = None) -> ToolUpdate | None:
    """The item as a ToolUpdate, or None when it is not a tool call."""
    builder = _BUILDERS.get(item.string("type"))
    return None if builder is None else builder(item, finished, output)
