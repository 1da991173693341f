"""Claude Code's tools in corral's vocabulary: kind, input, title, results.

What flows in: a `tool_use` block's name and input (from an `assistant`
frame, a `can_use_tool` request, or a transcript line), and later the
matching `tool_result` block with Claude Code's structured
`tool_use_result`. What flows out: cumulative `ToolUpdate` snapshots, or a
`PlanUpdated` for `TodoWrite` (a plan, not a tool).

The mapping table (kind, input, title):

| Claude tool                          | kind      | input                 |
|--------------------------------------|-----------|-----------------------|
| Bash                                 | Execute   | Command(command)      |
| Read                                 | Read      | Path(file_path)       |
| Edit, MultiEdit, Write, NotebookEdit | Edit      | Path(file/notebook)   |
| Glob, Grep                           | Search    | Pattern(pattern)      |
| LS                                   | Search    | Path(path)            |
| WebFetch                             | Fetch     | Url(url)              |
| WebSearch                            | Search    | Query(query)          |
| Task, Agent                          | Subagent  | Text(description)     |
| mcp__<server>__<tool>                | Mcp       | None, raw kept        |
| anything else                        | Other     | None, raw kept        |

Pure functions over decoded JSON; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ...pipeline.events import (
    CommandInput,
    FileDiff,
    Mcp,
    NoInput,
    PathInput,
    PatternInput,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    QueryInput,
    RawTool,
    TextInput,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from .._snapshots import tool_ended

__all__ = ["PLAN_TOOL", "finished_tool", "plan_from_todos", "started_tool", "tool_output"]

PLAN_TOOL = "TodoWrite"
_TITLE_LIMIT = 120

JsonMap = Mapping[str, Any]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _short(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= _TITLE_LIMIT else first[: _TITLE_LIMIT - 1] + "…"


@attrs.frozen
class _Shape:
    kind: ToolKind
    input: ToolInput
    title: str
    locations: tuple[str, ...] = ()


def _path_tool(kind: ToolKind, verb: str, *keys: str) -> Callable[[JsonMap], _Shape]:
    def shape(tool_input: JsonMap) -> _Shape:
        path = next((p for key in keys if (p := _text(tool_input.get(key)))), None)
        if path is None:
            return _Shape(kind, NoInput(), verb)
        return _Shape(kind, PathInput(path), f"{verb} {path}", (path,))

    return shape


def _bash(tool_input: JsonMap) -> _Shape:
    command = _text(tool_input.get("command")) or ""
    title = _text(tool_input.get("description")) or _short(command) or "Bash"
    return _Shape(ToolKind.EXECUTE, CommandInput(command=command), _short(title))


def _pattern(verb: str) -> Callable[[JsonMap], _Shape]:
    def shape(tool_input: JsonMap) -> _Shape:
        pattern = _text(tool_input.get("pattern"))
        if pattern is None:
            return _Shape(ToolKind.SEARCH, NoInput(), verb)
        return _Shape(ToolKind.SEARCH, PatternInput(pattern), _short(f"{verb} {pattern}"))

    return shape


def _fetch(tool_input: JsonMap) -> _Shape:
    url = _text(tool_input.get("url"))
    if url is None:
        return _Shape(ToolKind.FETCH, NoInput(), "Fetch")
    return _Shape(ToolKind.FETCH, UrlInput(url), _short(f"Fetch {url}"))


def _search(tool_input: JsonMap) -> _Shape:
    query = _text(tool_input.get("query"))
    if query is None:
        return _Shape(ToolKind.SEARCH, NoInput(), "Web search")
    return _Shape(ToolKind.SEARCH, QueryInput(query), _short(f"Search {query}"))


def _subagent(tool_input: JsonMap) -> _Shape:
    what = _text(tool_input.get("description")) or _text(tool_input.get("prompt"))
    if what is None:
        return _Shape(ToolKind.SUBAGENT, NoInput(), "Subagent")
    return _Shape(ToolKind.SUBAGENT, TextInput(what), _short(what))


_SHAPES: dict[str, Callable[[JsonMap], _Shape]] = {
    "Bash": _bash,
    "Read": _path_tool(ToolKind.READ, "Read", "file_path", "path"),
    "Edit": _path_tool(ToolKind.EDIT, "Edit", "file_path"),
    "MultiEdit": _path_tool(ToolKind.EDIT, "Edit", "file_path"),
    "Write": _path_tool(ToolKind.EDIT, "Write", "file_path"),
    "NotebookEdit": _path_tool(ToolKind.EDIT, "Edit", "notebook_path", "file_path"),
    "Glob": _pattern("Glob"),
    "Grep": _pattern("Grep"),
    "LS": _path_tool(ToolKind.SEARCH, "List", "path"),
    "WebFetch": _fetch,
    "WebSearch": _search,
    "Task": _subagent,
    "Agent": _subagent,
}


def _mcp_names(name: str) -> tuple[str, str] | None:
    if not name.startswith("mcp__"):
        return None
    server, _, tool = name[len("mcp__") :].partition("__")
    if not server or not tool:
        return None
    return server, tool


def started_tool(
    tool_id: str, name: str, tool_input: object, status: ToolStatus = ToolStatus.RUNNING
) -> ToolUpdate:
    """The first snapshot of a tool call, from its name and input."""
    given: JsonMap = tool_input if isinstance(tool_input, dict) else {}
    shaper = _SHAPES.get(name)
    if shaper is not None:
        shape = shaper(given)
        return ToolUpdate(
            id=tool_id,
            kind=shape.kind,
            title=shape.title,
            status=status,
            input=shape.input,
            locations=shape.locations,
        )
    mcp = _mcp_names(name)
    return ToolUpdate(
        id=tool_id,
        kind=ToolKind.OTHER if mcp is None else Mcp(server=mcp[0], tool=mcp[1]),
        title=name if mcp is None else f"{mcp[0]}: {mcp[1]}",
        status=status,
        raw=RawTool(name=name, input=tool_input),
    )


def tool_output(content: object) -> str | None:
    """The text of a `tool_result` block's content (a string or content blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block.get("type"), str):
            parts.append(f"[{block['type']}]")
    return "\n".join(parts)


def _replaced(original: str, old: str, new: str, every: bool) -> str | None:
    if not old or old not in original:
        return None
    return original.replace(old, new) if every else original.replace(old, new, 1)


def _edit_diff(result: JsonMap, path: str) -> FileDiff | None:
    original = result.get("originalFile")
    edits: list[JsonMap]
    if isinstance(result.get("edits"), list):
        edits = [e for e in result["edits"] if isinstance(e, dict)]
    else:
        edits = [result]
    if isinstance(original, str):
        text: str | None = original
        for edit in edits:
            if text is None:
                break
            text = _replaced(
                text,
                str(edit.get("oldString", edit.get("old_string", ""))),
                str(edit.get("newString", edit.get("new_string", ""))),
                bool(edit.get("replaceAll", edit.get("replace_all", False))),
            )
        if text is not None:
            return FileDiff(path=path, old_text=original, new_text=text)
    old, new = result.get("oldString"), result.get("newString")
    if isinstance(old, str) and isinstance(new, str):
        return FileDiff(path=path, old_text=old, new_text=new)
    return None


def file_diffs(result: object) -> tuple[FileDiff, ...]:
    """Diffs from Claude Code's structured `tool_use_result` of a file tool."""
    if not isinstance(result, dict):
        return ()
    path = _text(result.get("filePath"))
    if path is None:
        return ()
    if result.get("type") in ("create", "update") and isinstance(result.get("content"), str):
        original = result.get("originalFile")
        return (
            FileDiff(
                path=path,
                old_text=original if isinstance(original, str) else None,
                new_text=result["content"],
            ),
        )
    diff = _edit_diff(result, path)
    return () if diff is None else (diff,)


def finished_tool(started: ToolUpdate, block: JsonMap, structured: object) -> ToolUpdate:
    """The final snapshot: a `tool_result` block completes (or fails) the call."""
    failed = bool(block.get("is_error"))
    return tool_ended(
        started,
        ToolStatus.FAILED if failed else ToolStatus.COMPLETED,
        tool_output(block.get("content")),
        () if failed else file_diffs(structured),
    )


_PLAN_STATUSES = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}


def plan_from_todos(tool_input: object) -> PlanUpdated | None:
    """`TodoWrite {todos: [{content, status}]}` is the agent's plan."""
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("todos"), list):
        return None
    entries = []
    for todo in tool_input["todos"]:
        if not isinstance(todo, dict) or not isinstance(todo.get("content"), str):
            continue
        status = _PLAN_STATUSES.get(str(todo.get("status")), PlanStatus.PENDING)
        entries.append(PlanEntry(text=todo["content"], status=status))
    return PlanUpdated(tuple(entries))
