"""Reading transcripts back: line splitting, torn tails, damage, repair, the lock."""

from __future__ import annotations

import json
from pathlib import Path

from corral.pipeline.events import TextDelta
from corral.sinks.transcript import is_live, read_transcript, repair
from corral.sinks.transcript._file import FsyncPolicy, LineFile
from corral.sinks.transcript._paths import files_of
from corral.sinks.transcript._reader import split_lines

from .helpers import closed, event, opened, turn, writer


def _written(path: Path, *, footer: bool = True) -> Path:
    transcript = writer(path)
    transcript.write([opened(), *turn(1, "hello"), *turn(7, "again", message="m2")])
    if footer:
        transcript.write([closed(12, turns=2)])
    else:
        transcript.abandon()
    return path


def test_lines_split_on_newline_only() -> None:
    lines, rest = split_lines(b'{"a": "x\xe2\x80\xa8y\x0cz\x1cw"}\n{"b": 1}\ntorn')
    assert lines == [b'{"a": "x\xe2\x80\xa8y\x0cz\x1cw"}', b'{"b": 1}']
    assert rest == b"torn"


def test_text_with_line_separators_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    text = "one\u2028two\u2029three\x85four\x0cfive"
    events = turn(1, "x")
    delta = event(3, TextDelta(message_id="m1", text=text))
    writer(path).write([opened(), *events[:2], delta, *events[3:], closed(6)])
    read = read_transcript(files_of(path))
    assert read.problems == []
    assert read.events()[2].kind == TextDelta(message_id="m1", text=text)


def test_a_torn_last_line_is_reported_never_returned(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl", footer=False)
    with path.open("ab") as file:
        file.write(b'{"event": {"sequence": 13, "sess')
    read = read_transcript(files_of(path))
    assert read.torn_bytes == len(b'{"event": {"sequence": 13, "sess')
    assert [e.sequence for e in read.events()] == list(range(1, 13))
    assert read.problems == []


def test_repair_cuts_the_torn_line_counts_it_and_closes_the_transcript(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl", footer=False)
    with path.open("ab") as file:
        file.write(b'{"event": {"seq')
    report = repair(files_of(path))
    assert report is not None and report.cut_bytes == len(b'{"event": {"seq')
    read = read_transcript(files_of(path))
    assert read.torn_bytes == 0 and read.problems == []
    assert read.torn_lines_cut == 1
    assert read.footer is not None and read.footer.reason == "interrupted"
    assert read.footer.count("events") == 12 and read.footer.count("torn_lines_cut") == 1
    assert [e.sequence for e in read.events()] == list(range(1, 13))


def test_repair_leaves_a_finished_transcript_alone(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl")
    before = path.read_bytes()
    assert repair(files_of(path)) is None
    assert path.read_bytes() == before


def test_a_transcript_being_written_is_live_and_never_repaired(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    held = LineFile(path, fsync=FsyncPolicy.NEVER)
    held.create(b'{"transcript": {"id": "t", "format": 1}}\n')
    try:
        assert is_live(files_of(path))
        assert repair(files_of(path)) is None
        assert read_transcript(files_of(path)).footer is None
    finally:
        held.close(durable=False)
    assert not is_live(files_of(path))


def test_damage_in_the_middle_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl")
    lines = path.read_bytes().split(b"\n")
    lines[4] = b'{"event": not json'
    lines[6] = b'{"mystery": 1}'
    path.write_bytes(b"\n".join(lines))
    read = read_transcript(files_of(path))
    problems = [(p.line, p.problem.split(":")[0]) for p in read.problems]
    assert (5, "damaged record") in problems
    assert (7, "damaged record") in problems
    assert any("sequence jumps from 3 to 5" in p.problem for p in read.problems)
    assert read.footer is not None  # the rest is still read


def test_an_unknown_record_names_its_keys(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl")
    with path.open("ab") as file:
        file.write(json.dumps({"mystery": 1}).encode() + b"\n")
    read = read_transcript(files_of(path))
    assert any("unknown record (keys: mystery)" in p.problem for p in read.problems)


def test_a_record_after_the_footer_is_reported(tmp_path: Path) -> None:
    path = _written(tmp_path / "t.jsonl")
    with path.open("ab") as file:
        file.write(b'{"prompt": {"prompt_id": "p9", "text": "late"}}\n')
    read = read_transcript(files_of(path))
    assert any("record after the footer" in p.problem for p in read.problems)
