"""The normalizer's state and the helpers every handler uses.

`NormalizerState` holds what a Copilot session's events need remembered
(see `_normalize.py` for the whole picture): tool snapshots by call id,
sub-agent instances by `agentId`, streamed message ids, the latest context
window and the prompt in progress. Its helpers build `Emitted` events with
the sub-agent attribution (`parent_tool_id`, `copilot/agent_id`) applied
the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

import attrs

from ...pipeline.driver import Emitted, ProblemKind, RequestAsked, TokenCount
from ...pipeline.events import (
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    Request,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)

__all__ = ["RAW_KEY", "Json", "NormalizerState", "as_int", "as_str", "bad_shape", "is_map"]

RAW_KEY = "copilot/raw_frame"

Json = Mapping[str, Any]


def is_map(value: object) -> TypeGuard[Json]:
    """A JSON object: a dict (what the decoder makes, checked first: it is cheap) or a Mapping."""
    return type(value) is dict or isinstance(value, Mapping)


def as_str(data: Json, key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def as_int(data: Json, key: str) -> int | None:
    value = data.get(key)
    if type(value) is int:  # what the decoder makes: the common case, the cheapest test
        return value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@attrs.define
class Prompt:
    """The outcome of the prompt in progress, until `session.idle`."""

    cancelled: bool = False
    failure: str | None = None
    tokens: dict[str, int] = attrs.field(factory=dict)


class NormalizerState:
    def __init__(self) -> None:
        self._tools: dict[str, ToolUpdate] = {}
        self._agents: dict[str, str] = {}  # sub-agent instance id -> parent tool call id
        self._streamed: set[str] = set()  # message / reasoning ids with deltas
        self._window: tuple[int, int] | None = None  # (current, limit) tokens
        self._prompt = Prompt()

    def _emit(
        self,
        event: Json,
        kind: EventKind,
        extensions: Mapping[str, Any] | None = None,
        *,
        parent: bool = True,
        tokens: TokenCount | None = None,
        model: str | None = None,
    ) -> Emitted:
        extra: dict[str, Any] = dict(extensions) if extensions else {}
        agent = event.get("agentId")
        if agent and isinstance(agent, str):
            extra["copilot/agent_id"] = agent
        parent_id = self._parent(event, agent) if parent else None
        return Emitted(
            kind=kind, parent_tool_id=parent_id, tokens=tokens, model=model, extensions=extra
        )

    def _parent(self, event: Json, agent: object) -> str | None:
        """The tool call `event` belongs under: its sub-agent's, else the legacy field's."""
        if type(agent) is str and (spawner := self._agents.get(agent)) is not None:
            return spawner
        data = event.get("data")
        legacy = data.get("parentToolCallId") if is_map(data) else None
        return legacy if type(legacy) is str and legacy else None

    def _asked(
        self, event: Json, request: Request, extensions: Mapping[str, object]
    ) -> RequestAsked:
        parent_id = self._parent(event, event.get("agentId"))
        return RequestAsked(request=request, parent_tool_id=parent_id, extensions=extensions)

    def _tool(
        self,
        event: Json,
        tool: ToolUpdate,
        extensions: Mapping[str, Any] | None = None,
        *,
        parent: bool = True,
    ) -> Emitted:
        # A tool is forgotten only at `tool.execution_complete`: a sub-agent's
        # end comes before the end of the `task` call that ran it.
        if event.get("type") == "tool.execution_complete":
            self._tools.pop(tool.id, None)
        else:
            self._tools[tool.id] = tool
        return self._emit(event, ToolUpdated(tool), extensions, parent=parent)

    def _usage(
        self, event: Json, fallback: int, extensions: dict[str, Any], model: str | None = None
    ) -> Emitted:
        current, limit = self._window if self._window is not None else (fallback, None)
        counts = self._prompt.tokens  # ints under corral's names (`_assistant_usage`)
        tokens = TokenCount(**counts) if counts else None
        kind = ContextUsage(used_tokens=current, window_tokens=limit)
        return self._emit(event, kind, extensions, tokens=tokens, model=model)

    def _known_tool(self, tool_id: str) -> ToolUpdate:
        known = self._tools.get(tool_id)
        if known is not None:
            return known
        return ToolUpdate(id=tool_id, kind=ToolKind.OTHER, title=tool_id, status=ToolStatus.RUNNING)


def bad_shape(event: object, why: str) -> Emitted:
    note = Diagnostic(level=DiagnosticLevel.WARNING, message=f"malformed Copilot event: {why}")
    raw = dict(event) if isinstance(event, Mapping) else event
    return Emitted(kind=note, problem=ProblemKind.BAD_SHAPE, extensions={RAW_KEY: raw})
