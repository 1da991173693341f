"""A tool's input, read from its arguments by the tool's kind.

Providers whose wire names a tool and hands over its arguments as given
(the app-server wire, Copilot's session events) read the input the same
way: a command (with its working directory) for Execute, else the first
non-empty argument among the keys that provider uses for that kind; a
Fetch without a URL falls back to its query. The rule lives here; each
provider declares its keys in an `ArgumentKeys`. Pure, no state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from ..pipeline.events import (
    CommandInput,
    Mcp,
    NoInput,
    QueryInput,
    ToolInput,
    ToolKind,
)
from ._tools import first_text

__all__ = ["ArgumentKeys", "Reader"]

Reader = tuple[Callable[[str], ToolInput], tuple[str, ...]]  # the input made, the keys tried


@attrs.frozen(kw_only=True)
class ArgumentKeys:
    """Where one provider's tools keep their input, by kind; keys tried in order."""

    command: tuple[str, ...]
    readers: Mapping[ToolKind, Reader]
    cwd: tuple[str, ...] = ("cwd", "workdir")
    command_words: bool = False  # a `command` given as a list of words is joined

    def input_of(self, kind: ToolKind | Mcp, arguments: object) -> ToolInput:
        if not isinstance(arguments, Mapping):
            return NoInput()
        if kind is ToolKind.EXECUTE:
            command = first_text(arguments, *self.command)
            words = arguments.get("command")
            if command is None and self.command_words and isinstance(words, list):
                command = " ".join(str(word) for word in words)
            cwd = first_text(arguments, *self.cwd)
            return NoInput() if command is None else CommandInput(command=command, cwd=cwd)
        reader = self.readers.get(kind) if isinstance(kind, ToolKind) else None
        if reader is None:
            return NoInput()
        build, keys = reader
        value = first_text(arguments, *keys)
        if value is not None:
            return build(value)
        query = first_text(arguments, "query") if kind is ToolKind.FETCH else None
        return NoInput() if query is None else QueryInput(query)
