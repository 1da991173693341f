"""A batch made only of events the screen finds clean is written with one join.

It must be the same file as the record-by-record path writes, counted the
same, and a batch holding anything suspect must still be redacted whole:
the quick way is taken only when every record is an event found clean.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import attrs
import pytest
from corral.pipeline.events import (
    ContextUsage,
    Event,
    ReasoningDelta,
    TextDelta,
    ToolOutputDelta,
)
from corral.pipeline.wire import event_line
from corral.sinks.transcript import TranscriptWriteError, read_transcript
from corral.sinks.transcript._paths import files_of

from .helpers import closed, event, opened, turn, writer
from .test_writer import FullDisk

SECRET = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE"


def _stream(first: int) -> list[Event]:
    """A turn with deltas of three kinds, usage with tokens, and the turn's end."""
    events = turn(first, "hello there", message="m1")
    middle = [
        event(first + 6, ReasoningDelta(message_id="r1", text="thinking")),
        event(first + 7, ToolOutputDelta(tool_id="tool-1", text="ls output")),
        event(
            first + 8,
            ContextUsage(used_tokens=900, cost_usd=0.25),
            **{"corral/tokens": {"input": 800, "output": 100}},
        ),
    ]
    ordered = [*events[:3], *middle, *events[3:]]
    return [attrs.evolve(e, sequence=first + n) for n, e in enumerate(ordered)]


def _written(path: Path, batches: list[list[object]]) -> bytes:
    transcript = writer(path)
    for batch in batches:
        transcript.write(batch)  # type: ignore[arg-type]
    return path.read_bytes()


@pytest.mark.parametrize("size", [1, 2, 5, 64])
def test_events_alone_make_the_same_file_as_the_record_by_record_path(
    tmp_path: Path, size: int
) -> None:
    events = _stream(1)
    end = closed(len(events))
    # One batch that holds the session's ends too: every event the record-by-record way.
    reference = _written(tmp_path / "a" / "t.jsonl", [[opened(), *events, end]])
    # The events alone, in batches of `size`: each batch the quick way.
    batches: list[list[object]] = [[opened()]]
    batches += [list(events[s : s + size]) for s in range(0, len(events), size)]
    batches.append([end])
    quick = _written(tmp_path / "b" / "t.jsonl", batches)
    assert quick == reference
    # Each event's line is its shared encoding, as the line protocol writes it.
    assert quick.splitlines(keepends=True)[1:-1] == [event_line(e) for e in events]
    footer = json.loads(quick.splitlines()[-1])["footer"]
    assert footer["events"] == len(events) and footer["turns"] == 1
    assert footer["tokens"] == 900 and footer["cost_usd"] == 0.25
    assert footer["last_sequence"] == len(events) and footer["redactions"] == 0


def test_a_secret_in_an_events_only_batch_is_still_masked(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    transcript = writer(path)
    transcript.write([opened()])
    half = len(SECRET) // 2
    batch = [
        event(1, TextDelta(message_id="m1", text="nothing here")),
        event(2, TextDelta(message_id="m1", text=f"the key: {SECRET[:half]}")),
        event(3, TextDelta(message_id="m1", text=f"{SECRET[half:]} and on")),
        event(4, TextDelta(message_id="m2", text="ok"), **{"vendor/env": {"password": "x1"}}),
        event(5, TextDelta(message_id="m3", text=f"whole: {SECRET}")),
    ]
    transcript.write(batch)
    transcript.write([closed(5)])
    data = path.read_bytes()
    assert SECRET[:half].encode() not in data and SECRET[half:].encode() not in data
    assert b"x1" not in data
    lines = [json.loads(line) for line in data.splitlines()]
    redacted = {line["event"]["sequence"] for line in lines if "redacted" in line}
    assert {2, 3, 4, 5} <= redacted and 1 not in redacted
    assert lines[-1]["footer"]["events"] == 5 and lines[-1]["footer"]["redactions"] >= 4


def test_a_full_disk_in_an_events_only_batch_keeps_whole_lines_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    disk = FullDisk(room=10**9)
    transcript = writer(path, write=disk)
    transcript.write([opened()])
    events = [event(n, TextDelta(message_id="m1", text=f"chunk {n} " * 5)) for n in range(1, 41)]
    disk.room = 1_000  # a few of the batch's lines fit, one is torn, the rest do not
    with pytest.raises(TranscriptWriteError) as raised:
        transcript.write(events)
    assert raised.value.errno == errno.ENOSPC
    kept = raised.value.kept_lines
    assert 0 < kept < len(events)
    disk.room = 10**9
    transcript.write([closed(len(events))])
    read = read_transcript(files_of(path))
    assert read.problems == [] and read.torn_bytes == 0
    assert [e.sequence for e in read.events()] == list(range(1, kept + 1))
    assert read.footer is not None
    assert read.footer.raw["events"] == kept
    assert read.footer.raw["incomplete"]["lost_records"] == len(events) - kept
