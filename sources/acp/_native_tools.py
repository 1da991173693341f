"""A tool's input as Gemini's and opencode's own session files record it.

Both native readers (`_native_gemini`, `_native_opencode`) keep a table
from the agent's tool name to a `ToolKind` and the one argument that says
what the tool is about (a command, a path, a pattern, a URL, a query). The
argument's value becomes the input of that kind: a command (with the
working directory found under the agent's own keys), a search pattern, a
query (when the argument is named `query`), a URL, or else a path. A tool
without such an argument, or whose argument is not a string, has no input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.events import (
    CommandInput,
    NoInput,
    PathInput,
    PatternInput,
    QueryInput,
    ToolInput,
    ToolKind,
    UrlInput,
)

__all__ = ["native_tool_input"]


def native_tool_input(
    kind: ToolKind, key: str, args: Mapping[str, Any], cwd_keys: tuple[str, ...]
) -> ToolInput:
    """The input of a tool of `kind` whose subject is `args[key]`."""
    value = args.get(key) if key else None
    if not isinstance(value, str):
        return NoInput()
    if kind is ToolKind.EXECUTE:
        cwd = None
        for cwd_key in cwd_keys:
            cwd = args.get(cwd_key)
            if cwd:
                break
        return CommandInput(command=value, cwd=cwd if isinstance(cwd, str) else None)
    if kind is ToolKind.SEARCH:
        return PatternInput(value)
    if key == "query":
        return QueryInput(value)
    if kind is ToolKind.FETCH:
        return UrlInput(value)
    return PathInput(value)
