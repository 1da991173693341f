"""The recorded wires the throughput benchmark replays.

A corpus is the bytes an agent wrote (one JSON frame per line), cut into
segments, and the factory of the sans-IO reader its source uses; each
segment goes through a fresh reader, as a fresh session's wire would. The
built-in corpus is the mock agent's wire for a realistic turn (reasoning,
text deltas, tool updates with output, usage); `real_corpus` repeats the
recordings of a real agent (`_wires.py`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import orjson

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
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
from ._wires import WireReplay, real_corpora

__all__ = ["Corpus", "mock_corpus", "real_corpus", "real_corpus_names"]

_MOCK_SEGMENT = 512  # lines per segment of the mock corpus (its reader keeps no state)


@attrs.frozen
class Corpus:
    name: str
    segments: tuple[bytes, ...]  # each whole lines, each ending with b"\n"
    wire: Callable[[], WireReplay]

    @property
    def lines(self) -> list[bytes]:
        return [line + b"\n" for segment in self.segments for line in segment.split(b"\n")[:-1]]

    @property
    def size(self) -> int:
        return sum(len(segment) for segment in self.segments)


class _MockWire:
    def __init__(self) -> None:
        self._lines = JsonLinesDecoder()

    def feed(self, chunk: bytes) -> list[DriverEvent]:
        return [
            decode_event(frame)
            for frame in self._lines.feed(chunk)
            if not isinstance(frame, NotJson | Oversized)
        ]

    def end(self) -> list[DriverEvent]:
        return []


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
    lines = lines[:frames]
    segments = tuple(
        b"".join(lines[i : i + _MOCK_SEGMENT]) for i in range(0, len(lines), _MOCK_SEGMENT)
    )
    return Corpus(name="mock", segments=segments, wire=_MockWire)


def real_corpus_names() -> list[str]:
    """The real agents whose recordings are present (a source checkout)."""
    return list(real_corpora())


def real_corpus(name: str, frames: int) -> Corpus:
    """At least `frames` lines: whole repetitions of one source's recordings."""
    recordings, wire = real_corpora()[name]
    per_copy = sum(recording.count(b"\n") for recording in recordings)
    copies = max(1, -(-frames // per_copy))
    return Corpus(name=name, segments=recordings * copies, wire=wire)
