"""Tool calls and token usage of the app-server wire, in corral's vocabulary.

Pure functions. The wire says little about a tool beyond its name, its
arguments (in `item/toolCall/delta` and `approval/requested`) and, at the
end, its payload; kind and input are read from common tool names and
argument names, and every snapshot keeps the agent's own name and
arguments in `raw`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.events import (
    PathInput,
    PatternInput,
    RawTool,
    TextInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from .._inputs import ArgumentKeys

__all__ = ["tool_snapshot", "usage_tokens"]

_WORDS: tuple[tuple[tuple[str, ...], ToolKind], ...] = (
    (("bash", "shell", "exec", "command", "terminal", "run"), ToolKind.EXECUTE),
    (("delete", "remove", "rm"), ToolKind.DELETE),
    (("move", "rename"), ToolKind.MOVE),
    (("write", "edit", "patch", "create", "replace", "insert"), ToolKind.EDIT),
    (("read", "view", "cat", "open"), ToolKind.READ),
    (("grep", "glob", "search", "find", "list"), ToolKind.SEARCH),
    (("fetch", "http", "url", "web", "browse"), ToolKind.FETCH),
    (("think", "plan"), ToolKind.THINK),
    (("agent", "task", "delegate"), ToolKind.SUBAGENT),
)


def tool_kind(name: str) -> ToolKind:
    words = name.lower().replace("-", "_").replace(".", "_").split("_")
    for keys, kind in _WORDS:
        if any(word in keys for word in words):
            return kind
    return ToolKind.OTHER


_PATH = ("path", "file_path", "file", "filename")
_ARGUMENTS = ArgumentKeys(
    command=("command", "cmd", "script"),
    command_words=True,
    readers={
        ToolKind.READ: (PathInput, _PATH),
        ToolKind.EDIT: (PathInput, _PATH),
        ToolKind.DELETE: (PathInput, ("path", "file_path", "file")),
        ToolKind.MOVE: (PathInput, ("source", "path", "from")),
        ToolKind.SEARCH: (PatternInput, ("pattern", "query", "glob", "regex")),
        ToolKind.FETCH: (UrlInput, ("url", "uri")),
        ToolKind.THINK: (TextInput, ("thought", "text")),
        ToolKind.SUBAGENT: (TextInput, ("prompt", "task", "description")),
    },
)


def _output(payload: Mapping[str, Any]) -> str | None:
    for key in ("output", "result", "error", "message", "errorCode"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
        if value is not None and not isinstance(value, str):
            return str(value)
    return None


def tool_snapshot(
    known: ToolUpdate | None,
    tool_id: str,
    payload: Mapping[str, Any],
    arguments: object,
    status: ToolStatus,
) -> ToolUpdate:
    """`known` refined by one notification: new arguments, a new status, an output."""
    previous = known.raw if known is not None and known.raw is not None else None
    name = payload.get("toolName")
    if not isinstance(name, str) or not name:
        name = previous.name if previous is not None else "tool"
    merged: dict[str, Any] = (
        dict(previous.input) if previous and isinstance(previous.input, dict) else {}
    )
    if isinstance(arguments, Mapping):
        inner = arguments.get("arguments")
        merged.update(inner if isinstance(inner, Mapping) else arguments)
    kind = tool_kind(name)
    output = _output(payload) if status.finished else None
    return ToolUpdate(
        id=tool_id,
        kind=kind,
        title=name,
        status=status,
        input=_ARGUMENTS.input_of(kind, merged),
        output=output if output is not None else (known.output if known is not None else None),
        raw=RawTool(name=name, input=merged),
    )


_TOKEN_KEYS = {
    "input": ("inputTokens", "promptTokens", "input_tokens", "prompt_tokens", "input"),
    "output": ("outputTokens", "completionTokens", "output_tokens", "completion_tokens", "output"),
    "cache_read": ("cacheReadTokens", "cachedInputTokens", "cache_read_tokens", "cached_tokens"),
    "cache_write": ("cacheWriteTokens", "cache_write_tokens", "cacheCreationTokens"),
    "reasoning": ("reasoningTokens", "reasoning_tokens", "reasoningOutputTokens"),
}


def usage_tokens(usage: Mapping[str, Any]) -> dict[str, int]:
    """Token counts under corral's names, from the usual spellings of usage objects."""
    tokens: dict[str, int] = {}
    for name, keys in _TOKEN_KEYS.items():
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                tokens[name] = value
                break
    return tokens
