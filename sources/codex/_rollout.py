"""Codex rollout transcripts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) → replay items.

In: the bytes of a rollout file (one JSON object per line:
`{"timestamp", "type", "payload"}`). Out: `ReplayItem`s in file order, for
the archive's import, which runs them through a real engine.

Only two line types matter: `session_meta` (the thread id becomes the
resume token) and `event_msg` (an `EventMsg` payload, translated by
`EventMsgNormalizer`). The others (`response_item`, `turn_context`,
`world_state`, `compacted`, ...) repeat what the events already say, for
Codex's own use, and are skipped by name; an unknown line type is an Info
diagnostic.

The user's prompts become `PromptSent` (with the line's timestamp). Codex
writes a turn's `task_started` before the prompt that began it, so the
reader holds the `TurnBegan` back until the prompt (then `PromptSent`,
`TurnBegan`) or the turn's first content (an agent-started turn, such as a
compaction) arrives; bookkeeping (usage, diagnostics) does not release
it. A second user message inside a running turn was a steer: it becomes a
`UserMessage` marked `codex/steer`, not a new prompt. Undecodable lines
(a torn last line of a live rollout) become Warning diagnostics.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ...pipeline.driver import (
    DriverEvent,
    Emitted,
    InfoChanged,
    ProblemKind,
    PromptSent,
    ReplayItem,
    TurnBegan,
)
from ...pipeline.events import (
    ContextUsage,
    Diagnostic,
    PlanUsageUpdated,
    UserMessage,
)
from ._common import problem, unknown_frame
from ._eventmsg import EventMsgNormalizer

__all__ = ["SKIPPED_LINE_TYPES", "RolloutReader", "read_native_transcript", "recognizes_line"]

SKIPPED_LINE_TYPES = frozenset(
    {
        "response_item",
        "turn_context",
        "world_state",
        "compacted",
        "token_usage_record",
        "retained_context",
    }
)
# The line types that make a file a rollout, for `corral import`'s detection.
_LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_READ_SIZE = 256 * 1024
_MAX_LINE = 64 * 1024 * 1024


def _timestamp_ns(raw: object) -> int | None:
    if not isinstance(raw, str):
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(moment.timestamp() * 1_000_000) * 1000


def _bookkeeping(event: DriverEvent) -> bool:
    if isinstance(event, InfoChanged):
        return True
    return isinstance(event, Emitted) and isinstance(
        event.kind, ContextUsage | Diagnostic | PlanUsageUpdated
    )


class RolloutReader:
    def __init__(self) -> None:
        self._lines = JsonLinesDecoder(max_line=_MAX_LINE)
        self._events = EventMsgNormalizer()
        self._begin_held = False
        self._steers = itertools.count(1)

    def feed(self, chunk: bytes) -> list[ReplayItem]:
        return [item for line in self._lines.feed(chunk) for item in self._line(line)]

    def end(self) -> list[ReplayItem]:
        items = [item for line in self._lines.end() for item in self._line(line)]
        if self._begin_held:  # a turn the rollout never finished
            self._begin_held = False
            items.append(TurnBegan())
        return items

    def _line(self, line: dict[str, object] | NotJson | Oversized) -> list[ReplayItem]:
        if isinstance(line, Oversized):
            note = f"a rollout line of {line.length} bytes was too long"
            return [problem(ProblemKind.OVERSIZED, note)]
        if isinstance(line, NotJson):
            note = f"a rollout line is not JSON: {line.reason}"
            extensions = {"codex/raw_line": line.prefix}
            return [problem(ProblemKind.NOT_JSON, note, **extensions)]
        line_type = line.get("type")
        payload = line.get("payload")
        if line_type == "event_msg":
            return self._event(payload, _timestamp_ns(line.get("timestamp")))
        if line_type == "session_meta":
            token = payload.get("id") if isinstance(payload, dict) else None
            return [InfoChanged(resume_token=token)] if isinstance(token, str) else []
        if isinstance(line_type, str) and line_type in SKIPPED_LINE_TYPES:
            return []
        return [unknown_frame(f"rollout/{line_type}", line)]

    def _event(self, payload: object, at_ns: int | None) -> list[ReplayItem]:
        text = self._events.user_prompt(payload)
        if text is not None:
            return self._prompt(text, at_ns)
        events = self._events.feed(payload)
        if events == [TurnBegan()]:
            self._begin_held = True
            return []
        if self._begin_held and not all(_bookkeeping(event) for event in events):
            self._begin_held = False
            return [TurnBegan(), *events]
        return list(events)

    def _prompt(self, text: str, at_ns: int | None) -> list[ReplayItem]:
        if self._begin_held:
            self._begin_held = False
            return [PromptSent(text=text, at_ns=at_ns), TurnBegan()]
        if not self._events.in_turn:
            return [PromptSent(text=text, at_ns=at_ns)]
        steer = UserMessage(message_id=f"steer-{next(self._steers)}", text=text)
        return [Emitted(kind=steer, extensions={"codex/steer": True})]


def read_native_transcript(path: str | Path) -> Iterator[ReplayItem]:
    """A Codex rollout file as replay items, read incrementally."""
    reader = RolloutReader()
    with open(path, "rb") as handle:
        while chunk := handle.read(_READ_SIZE):
            yield from reader.feed(chunk)
    yield from reader.end()


def recognizes_line(value: Mapping[str, Any], path: Path) -> bool:
    """Whether one of a file's first lines is a rollout line: `{"type", "payload"}`."""
    if value.get("type") in _LINE_TYPES and "payload" in value:
        return True
    # Early rollouts: a bare session meta line, then response items.
    return path.name.startswith("rollout-") and "id" in value and "timestamp" in value
