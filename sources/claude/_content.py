"""Message content → DriverEvents: what the model said, what the tools did.

Shared by the live wire (`_protocol.py`) and the native transcript reader
(`_transcript.py`), because both carry Anthropic Messages content blocks.

What flows in:
- `stream_event` frames (the raw Messages API stream, live only):
  text/thinking deltas become `TextDelta`/`ReasoningDelta` as they arrive,
  `message_stop` becomes `MessageEnded`;
- `assistant` messages: `tool_use` blocks become `ToolUpdated` Running
  (`TodoWrite` becomes `PlanUpdated`); text and thinking blocks are emitted
  only for messages that were not streamed (transcripts, and the CLI's
  synthetic messages such as API errors), with their `MessageEnded`;
- `user` messages: `tool_result` blocks complete their tool (Completed or
  Failed, with output and file diffs); other user text is the agent's own
  user-role content (`UserMessage`), except harness markers (slash-command
  echoes, interruption markers: silent) and local command output (an Info
  `Diagnostic`, which never opens a turn).

Every event carries the frame's `parent_tool_use_id` as `parent_tool_id`
(events of a subagent). State: tool snapshots until their result, the
message being streamed per thread, and the last main-thread usage (what
the context holds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolUpdate,
    ToolUpdated,
    UserMessage,
)
from .._kit.quick import text_emitter
from ._json import field_list, field_obj
from ._tools import PLAN_TOOL, finished_tool, plan_from_todos, started_tool

__all__ = ["Content", "user_text"]

_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_LOCAL_OUTPUT = re.compile(r"^\s*<local-command-(?:stdout|stderr)>(.*?)</local-command-", re.S)
_SILENT_PREFIXES = (
    "<command-name>",
    "<local-command-caveat>",
    "[Request interrupted by user",
)


def user_text(content: object) -> str | None:
    """The text of user content (a string or text blocks); None if it has none."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


_TEXT = text_emitter(TextDelta)  # `_emit(TextDelta(...), None)`, built the quick way

# A tuple, not a set: an event's `type` may be any JSON value, unhashable too.
_QUIET_STREAM = ("content_block_start", "content_block_stop", "ping")


class Content:
    """Content normalizer; one per session (or per transcript)."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolUpdate] = {}
        self.parents: dict[str, str] = {}  # tool id -> the subagent tool it runs under
        self._plan_tools: set[str] = set()
        self._streaming: dict[str | None, str] = {}  # thread (parent tool id) -> message id
        self._streamed: set[str] = set()
        self._written: set[str] = set()  # unstreamed messages whose text was emitted
        self.usage: Mapping[str, Any] | None = None  # last main-thread message usage
        self.model: str | None = None

    # ---- the live stream ---------------------------------------------------------

    def stream_event(
        self, event: Mapping[str, Any], parent: str | None
    ) -> list[DriverEvent] | None:
        """Events for one raw stream event; None when the event type is unknown."""
        kind = event.get("type")
        if kind == "content_block_delta":  # the commonest, tested first
            return self._delta(event.get("delta"), parent)
        if kind in _QUIET_STREAM:
            return []
        if kind == "message_start":
            message = field_obj(event, "message")
            message_id = str(message.get("id") or f"stream-{len(self._streamed)}")
            self._streaming[parent] = message_id
            self._streamed.add(message_id)
            self._note_usage(message.get("usage"), message.get("model"), parent)
            return []
        if kind == "message_delta":
            self._note_usage(event.get("usage"), None, parent)
            return []
        if kind == "message_stop":
            ended = self._streaming.pop(parent, None)
            return [] if ended is None else [_emit(MessageEnded(ended), parent)]
        return None

    def _delta(self, delta: object, parent: str | None) -> list[DriverEvent]:
        message_id = self._streaming.get(parent)
        if not isinstance(delta, dict) or message_id is None:
            return []
        if delta.get("type") == "text_delta" and isinstance(text := delta.get("text"), str):
            if parent is None:  # the main thread's, the bulk of a stream
                return [_TEXT(message_id, text)]
            return [_emit(TextDelta(message_id=message_id, text=text), parent)]
        if delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
            return [_emit(ReasoningDelta(message_id=message_id, text=delta["thinking"]), parent)]
        return []  # tool input, signatures, citations: the full message carries them

    def _note_usage(self, usage: object, model: object, parent: str | None) -> None:
        if parent is not None:
            return
        if isinstance(model, str) and model and not model.startswith("<"):
            self.model = model
        if isinstance(usage, dict):
            self.usage = {**(self.usage or {}), **usage} if model is None else dict(usage)

    # ---- whole messages ----------------------------------------------------------

    def assistant(self, message: Mapping[str, Any], parent: str | None) -> list[DriverEvent]:
        message_id = str(message.get("id") or "")
        blocks = field_list(message, "content")
        streamed = message_id in self._streamed
        if not streamed:
            self._note_usage(message.get("usage"), message.get("model"), parent)
        events: list[DriverEvent] = []
        write_text = not streamed and message_id not in self._written
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if str(block.get("type")) in _TOOL_BLOCKS:
                events.extend(self._tool_use(block, parent))
            elif write_text:
                events.extend(self._text_block(block, message_id, parent))
        if write_text and any(_is_text(event) for event in events):
            self._written.add(message_id)
            events.append(_emit(MessageEnded(message_id), parent))
        return events

    def _text_block(
        self, block: Mapping[str, Any], message_id: str, parent: str | None
    ) -> list[DriverEvent]:
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            return [_emit(TextDelta(message_id=message_id, text=block["text"]), parent)]
        thinking = block.get("thinking")
        if block.get("type") == "thinking" and isinstance(thinking, str) and thinking:
            return [_emit(ReasoningDelta(message_id=message_id, text=thinking), parent)]
        return []

    def _tool_use(self, block: Mapping[str, Any], parent: str | None) -> list[DriverEvent]:
        tool_id, name = block.get("id"), block.get("name")
        if not isinstance(tool_id, str) or not isinstance(name, str):
            return []
        if tool_id in self.tools or tool_id in self._plan_tools:
            return []  # cumulative frames repeat earlier blocks
        if name == PLAN_TOOL:
            plan = plan_from_todos(block.get("input"))
            self._plan_tools.add(tool_id)
            return [] if plan is None else [_emit(plan, parent)]
        tool = started_tool(tool_id, name, block.get("input"))
        self.tools[tool_id] = tool
        if parent is not None:
            self.parents[tool_id] = parent
        return [_emit(ToolUpdated(tool), parent)]

    def user(
        self,
        content: object,
        structured: object,
        parent: str | None,
        message_id: str,
        *,
        meta: bool = False,
    ) -> list[DriverEvent]:
        """A user-role message that is not one of our prompts."""
        if isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                return self._tool_results(results, structured, parent)
        text = user_text(content)
        if text is None or meta or text.startswith(_SILENT_PREFIXES):
            return []
        local = _LOCAL_OUTPUT.match(text)
        if local is not None:
            note = Diagnostic(level=DiagnosticLevel.INFO, message=local.group(1).strip())
            return [_emit(note, parent)]
        return [_emit(UserMessage(message_id=message_id, text=text), parent)]

    def _tool_results(
        self, results: list[dict[str, Any]], structured: object, parent: str | None
    ) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for block in results:
            tool_id = block.get("tool_use_id")
            if not isinstance(tool_id, str) or tool_id in self._plan_tools:
                continue
            started = self.tools.pop(tool_id, None)
            self.parents.pop(tool_id, None)
            if started is None:
                started = started_tool(tool_id, "unknown", None)
            detail = structured if len(results) == 1 else None
            events.append(_emit(ToolUpdated(finished_tool(started, block, detail)), parent))
        return events


def _is_text(event: DriverEvent) -> bool:
    return isinstance(event, Emitted) and isinstance(event.kind, TextDelta | ReasoningDelta)


def _emit(kind: EventKind, parent: str | None) -> Emitted:
    return Emitted(kind=kind, parent_tool_id=parent)
