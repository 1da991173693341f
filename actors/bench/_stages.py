"""Where a corpus's cost goes: stages of the pipeline timed alone, in the same run.

- source: the source's own sans-IO reader (framing, orjson, normalizing
  into driver events), fed the recorded bytes in pipe-sized chunks;
- line: each event encoded for the line protocol, its shared JSON
  encoding included;
- transcript: the transcript writer on the same events, already encoded
  (as in the pipeline, where the line sink encodes first): redaction, its
  own line, the file write, one batch of 256 at a time.

The events are the agent's output (`Emitted`) numbered as the engine would;
the engine's own events (status, turns) are left out. What the full
pipeline costs beyond these three is the rest: the engine, the channels
between stages, task switches and the hand-offs to the writer's thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Event,
    InstallationSource,
    SessionInfo,
    SystemTime,
    TurnContext,
)
from ...pipeline.records import Closed, Opened, SinkItem
from ...pipeline.wire import event_line
from ...sinks.transcript import TranscriptWriter, WriterSettings
from ._corpus import Corpus
from ._replay import CHUNK
from ._scratch import scratch_transcripts

__all__ = ["StageCosts", "measure_stages"]

_BATCH = 256
_AGENT = AgentInstallation(
    id="bench", name="bench", executable_path="", source=InstallationSource.PINNED
)


@attrs.frozen(kw_only=True)
class StageCosts:
    source_s: float
    line_s: float
    transcript_s: float


def _source(corpus: Corpus) -> tuple[float, list[DriverEvent]]:
    out: list[DriverEvent] = []
    started = time.perf_counter()
    for segment in corpus.segments:
        wire = corpus.wire()
        for start in range(0, len(segment), CHUNK):
            out += wire.feed(segment[start : start + CHUNK])
        out += wire.end()
    return time.perf_counter() - started, out


def _events(driven: Sequence[DriverEvent]) -> list[Event]:
    now = SystemTime.from_ns(time.time_ns())
    turn = TurnContext(id="t1")
    emitted = [event for event in driven if isinstance(event, Emitted)]
    return [
        Event(
            sequence=number,
            session_id="s1",
            kind=event.kind,
            occurred_at=now,
            turn_info=turn,
            extensions=event.extensions,
        )
        for number, event in enumerate(emitted, 1)
    ]


def _lines(events: Sequence[Event]) -> float:
    started = time.perf_counter()
    for event in events:
        event_line(event)
    return time.perf_counter() - started


def _transcript(events: Sequence[Event], folder: Path) -> float:
    writer = TranscriptWriter(
        path=folder / "stages.jsonl",
        transcript_id="stages",
        settings=WriterSettings(corral_version="bench"),
    )
    now = SystemTime.from_ns(time.time_ns())
    info = SessionInfo(id="s1", agent=_AGENT, details=AgentDetails())
    items: list[SinkItem] = [Opened(info=info, at=now, dir=str(folder)), *events]
    items.append(Closed(session_id="s1", reason="closed", at=now, events=len(events), turns=1))
    started = time.perf_counter()
    for start in range(0, len(items), _BATCH):
        writer.write(items[start : start + _BATCH])
    return time.perf_counter() - started


def measure_stages(corpus: Corpus, *, repeat: int = 3) -> StageCosts:
    """The fastest of `repeat` runs of each stage."""
    runs = [_source(corpus) for _ in range(repeat)]
    events = _events(runs[0][1])
    line = min(_lines([attrs.evolve(event) for event in events]) for _ in range(repeat))
    for event in events:
        event.json()  # encoded once, as the line sink leaves them for the transcript
    transcript = []
    with scratch_transcripts() as settings:
        for attempt in range(repeat):
            folder = settings.dir / str(attempt)
            folder.mkdir(parents=True)
            transcript.append(_transcript(events, folder))
    return StageCosts(
        source_s=min(seconds for seconds, _ in runs),
        line_s=line,
        transcript_s=min(transcript),
    )
