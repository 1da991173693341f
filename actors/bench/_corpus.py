"""The recorded wires the throughput benchmark replays.

Each corpus is the bytes an agent wrote (one JSON frame per line) and the
translator its source uses. The built-in corpus is the mock agent's wire
for a realistic turn (reasoning, text deltas, tool updates with output,
usage); sources that ship a translator and recorded fixtures add theirs
(`tests/fixtures/<source>/*.jsonl`, looked up from the repository root).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import orjson

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    CommandInput,
    ContextUsage,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from ...sources.mock._wire import decode_event, encode_event
from ._replay import FrameTranslator

__all__ = ["Corpus", "mock_corpus"]


@attrs.frozen
class Corpus:
    name: str
    lines: tuple[bytes, ...]  # each ends with b"\n"
    translator: Callable[[], FrameTranslator]

    @property
    def size(self) -> int:
        return sum(len(line) for line in self.lines)


class _MockTranslator:
    def feed(self, frame: dict[str, Any]) -> list[DriverEvent]:
        return [decode_event(frame)]


def _mock_turn(index: int) -> list[DriverEvent]:
    tool = ToolUpdate(
        id=f"tool{index}",
        kind=ToolKind.EXECUTE,
        title="pytest -q tests/unit",
        status=ToolStatus.RUNNING,
        input=CommandInput(command="pytest -q tests/unit", cwd="/work/project"),
    )
    events: list[DriverEvent] = [
        Emitted(kind=ReasoningDelta(message_id=f"r{index}", text="Let me check the failing test.")),
        Emitted(kind=MessageEnded(f"r{index}")),
        Emitted(kind=ToolUpdated(tool)),
    ]
    events += [
        Emitted(kind=ToolOutputDelta(tool_id=tool.id, text=f"tests/unit/test_{n}.py ....\n"))
        for n in range(8)
    ]
    done = attrs.evolve(tool, status=ToolStatus.COMPLETED, output="32 passed in 0.8s")
    events.append(Emitted(kind=ToolUpdated(done)))
    words = [
        "The",
        "failing",
        "assertion",
        "compared",
        "naive",
        "and",
        "aware",
        "datetimes;",
        "fixed",
        "by",
    ]
    events += [
        Emitted(kind=TextDelta(message_id=f"m{index}", text=word + " ")) for word in words * 3
    ]
    events.append(Emitted(kind=MessageEnded(f"m{index}")))
    events.append(Emitted(kind=ContextUsage(used_tokens=12_000 + index, window_tokens=200_000)))
    return events


def mock_corpus(frames: int) -> Corpus:
    """About `frames` lines of the mock agent's wire."""
    lines: list[bytes] = []
    index = 0
    while len(lines) < frames:
        lines += [orjson.dumps(encode_event(e)) + b"\n" for e in _mock_turn(index)]
        index += 1
    return Corpus(name="mock", lines=tuple(lines[:frames]), translator=_MockTranslator)
