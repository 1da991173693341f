"""Where a corpus's cost goes: stages of the pipeline timed alone, in the same run.

- source: the source's own sans-IO reader (framing, orjson, normalizing
  into driver events), fed the recorded bytes in pipe-sized chunks, one
  batch of driver events per chunk;
- engine: the session engine (sans-IO too) on those batches, as one
  prompted turn, as the replay driver plays them (`on_driver_events`);
- line: the events the engine emitted for each batch, encoded for the line
  protocol into one buffer (as the line sink does), their shared JSON
  encoding included;
- transcript: the transcript writer on the engine's records, events
  already encoded (as in the pipeline, where the line sink encodes
  first): redaction, its own line, the file write, 256 at a time.

What the full pipeline costs beyond these four is the rest: the bounded
channels between stages, task switches, the hand-offs to the writer's
thread, and the metrics sink.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from ...pipeline.driver import DriverEvent, Handshake, TurnBegan, TurnFinished
from ...pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Completed,
    Event,
    InstallationSource,
)
from ...pipeline.records import SinkItem
from ...pipeline.wire import event_line
from ...sinks.transcript import TranscriptWriter, WriterSettings
from ..engine import Engine
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
    engine_s: float
    line_s: float
    transcript_s: float


def _source(corpus: Corpus) -> tuple[float, list[list[DriverEvent]]]:
    out: list[list[DriverEvent]] = []
    started = time.perf_counter()
    for segment in corpus.segments:
        wire = corpus.wire()
        for start in range(0, len(segment), CHUNK):
            out.append(wire.feed(segment[start : start + CHUNK]))
        out.append(wire.end())
    return time.perf_counter() - started, out


def _engine(driven: Sequence[list[DriverEvent]]) -> tuple[float, list[list[SinkItem]]]:
    """The engine's records, one batch per batch of driver events."""
    engine = Engine(
        session_id="s1",
        agent=_AGENT,
        handshake=Handshake(details=AgentDetails()),
        clock=time.monotonic,
        wall_clock_ns=time.time_ns,
    )
    records: list[list[SinkItem]] = []
    outbox = engine.outbox
    started = time.perf_counter()
    engine.prompt("replay")
    engine.on_driver_event(TurnBegan())
    for batch in driven:
        # The recordings' own turn boundaries fold into the one replayed turn.
        engine.on_driver_events(e for e in batch if not isinstance(e, TurnBegan | TurnFinished))
        records.append(list(outbox))
        outbox.clear()
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.close()
    engine.finish()  # the engine makes the session's records, `Opened` to `Closed`
    records.append(list(outbox))
    seconds = time.perf_counter() - started
    return seconds, records


def _lines(batches: Sequence[Sequence[Event]]) -> float:
    started = time.perf_counter()
    for batch in batches:
        b"".join([event_line(event) for event in batch])
    return time.perf_counter() - started


def _transcript(records: Sequence[SinkItem], folder: Path) -> float:
    writer = TranscriptWriter(
        path=folder / "stages.jsonl",
        transcript_id="stages",
        settings=WriterSettings(corral_version="bench"),
    )
    items = list(records)
    started = time.perf_counter()
    for start in range(0, len(items), _BATCH):
        writer.write(items[start : start + _BATCH])
    return time.perf_counter() - started


def _fresh(batches: Sequence[Sequence[SinkItem]]) -> list[list[Event]]:
    """Copies of the events, each batch's: an event keeps its encoding once made."""
    return [[attrs.evolve(e) for e in batch if isinstance(e, Event)] for batch in batches]


def measure_stages(corpus: Corpus, *, repeat: int = 3) -> StageCosts:
    """The fastest of `repeat` runs of each stage."""
    sourced = [_source(corpus) for _ in range(repeat)]
    driven = sourced[0][1]
    engined = [_engine(driven) for _ in range(repeat)]
    batches = engined[0][1]
    records = [record for batch in batches for record in batch]
    events = [record for record in records if isinstance(record, Event)]
    line = min(_lines(_fresh(batches)) for _ in range(repeat))
    for event in events:
        event.json()  # encoded once, as the line sink leaves them for the transcript
    transcript = []
    with scratch_transcripts() as settings:
        for attempt in range(repeat):
            folder = settings.dir / str(attempt)
            folder.mkdir(parents=True)
            transcript.append(_transcript(records, folder))
    return StageCosts(
        source_s=min(seconds for seconds, _ in sourced),
        engine_s=min(seconds for seconds, _ in engined),
        line_s=line,
        transcript_s=min(transcript),
    )
