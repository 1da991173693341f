"""The transcript writer: format, redaction on disk, fsync policy, write errors, rotation."""

from __future__ import annotations

import errno
import gzip
import json
import os
from pathlib import Path

import pytest
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import TextDelta
from corral.pipeline.records import Decision, Outcome, Prompted, SessionFailed
from corral.sinks.transcript import (
    FORMAT_VERSION,
    FsyncPolicy,
    TranscriptWriteError,
    find_transcripts,
    read_transcript,
)
from corral.sinks.transcript._paths import files_of

from tests.support.schema import check_line

from .helpers import at, closed, event, opened, turn, writer


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def test_a_session_is_a_header_its_records_in_order_and_a_footer(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    events = turn(1, "hello")
    decision = Decision(
        session_id="s1", request_id="r1", decision=Outcome.ALLOW_ONCE, decided_by="app", at=at(3)
    )
    prompt = Prompted(session_id="s1", prompt_id="p1", text="say hello", at=at(0))
    writer(path).write([opened(), prompt, *events[:3], decision, *events[3:], closed(6)])
    lines = _lines(path)
    header = lines[0]["transcript"]
    assert header["format"] == FORMAT_VERSION and header["agent"] == "mock"  # type: ignore[index]
    assert header["session"]["id"] == "s1"  # type: ignore[index]
    assert lines[1] == {"prompt": {"session_id": "s1", "prompt_id": "p1", "text": "say hello",
                                   "attachments": [], "at": at(0).to_wire()}}  # fmt: skip
    assert [line["event"]["sequence"] for line in lines if "event" in line] == [1, 2, 3, 4, 5, 6]  # type: ignore[index]
    assert lines[5]["decision"]["decided_by"] == "app"  # type: ignore[index]
    footer = lines[-1]["footer"]
    assert footer["reason"] == "closed" and footer["events"] == 6 and footer["decisions"] == 1  # type: ignore[index]


def test_event_and_session_error_lines_are_line_protocol_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    failure = SessionFailed(
        session_id="s1",
        error=CorralError(ErrorKind.PROCESS_EXITED, "mock exited", status="9", stderr="boom"),
    )
    writer(path).write([opened(), *turn(1, "hi"), failure, closed(6, reason="failed")])
    for line in _lines(path):
        if "event" in line or "error" in line:
            check_line(line)


def test_the_footer_counts_tokens_and_cost(tmp_path: Path) -> None:
    from corral.pipeline.events import ContextUsage

    path = tmp_path / "t.jsonl"
    usage = event(7, ContextUsage(used_tokens=900, cost_usd=0.25),
                  **{"corral/tokens": {"input": 800, "output": 100, "cache_read": 5}})  # fmt: skip
    writer(path).write([opened(), *turn(1, "hi"), usage, closed(7)])
    footer = _lines(path)[-1]["footer"]
    assert footer["tokens"] == 900 and footer["cost_usd"] == 0.25  # type: ignore[index]


def test_secrets_are_redacted_before_they_reach_disk_and_the_record_is_marked(
    tmp_path: Path,
) -> None:
    secret = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE"
    path = tmp_path / "t.jsonl"
    leaky = event(3, TextDelta(message_id="m1", text=f"the key is {secret}"),
                  **{"claude/raw_frame": {"env": {"ANTHROPIC_API_KEY": secret}}})  # fmt: skip
    events = turn(1, "x")
    writer(path).write([opened(), *events[:2], leaky, *events[3:], closed(6)])
    assert secret.encode() not in path.read_bytes()
    marked = next(line for line in _lines(path) if line.get("event", {}).get("sequence") == 3)  # type: ignore[attr-defined]
    assert marked["redacted"] == {"count": 2, "patterns": ["anthropic_key", "secret_field"]}
    assert _lines(path)[-1]["footer"]["redactions"] == 2  # type: ignore[index]


def test_no_redact_writes_text_as_it_is(tmp_path: Path) -> None:
    secret = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE"
    path = tmp_path / "t.jsonl"
    writer(path, redactor=None).write([opened(), *turn(1, secret), closed(6)])
    assert secret.encode() in path.read_bytes()
    assert _lines(path)[0]["transcript"]["redaction"] is False  # type: ignore[index]


class CountingSync:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, fd: int) -> None:
        self.calls += 1
        os.fsync(fd)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # header (create) + the batch that ends a turn + the footer + close
        (FsyncPolicy.ALWAYS, 5),
        (FsyncPolicy.TURN, 4),
        (FsyncPolicy.NEVER, 0),
    ],
)
def test_fsync_follows_the_policy(tmp_path: Path, policy: FsyncPolicy, expected: int) -> None:
    sync = CountingSync()
    transcript = writer(tmp_path / "t.jsonl", fsync=policy, sync=sync)
    events = turn(1, "hi")
    transcript.write([opened()])
    transcript.write(events[:3])  # no turn end: only `always` syncs
    transcript.write(events[3:])  # the turn ends
    transcript.write([closed(6)])
    assert sync.calls == expected


class FullDisk:
    """os.write that accepts `room` more bytes, then fails with ENOSPC (a partial write first)."""

    def __init__(self, room: int) -> None:
        self.room = room

    def __call__(self, fd: int, data: bytes) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, data[: self.room])
        self.room -= written
        return written


def test_a_full_disk_is_a_clear_error_and_leaves_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    disk = FullDisk(room=10**9)
    transcript = writer(path, write=disk)
    transcript.write([opened(), *turn(1, "first turn")])
    disk.room = 150  # part of the next batch fits, then the disk is full
    with pytest.raises(TranscriptWriteError) as raised:
        transcript.write(turn(7, "second turn " * 20, message="m2", prompt="p2"))
    assert "the disk is full" in str(raised.value) and str(path) in str(raised.value)
    assert raised.value.errno == errno.ENOSPC
    assert path.read_bytes().endswith(b"\n")
    read = read_transcript(files_of(path))
    assert read.problems == [] and read.torn_bytes == 0
    assert [e.sequence for e in read.events()] == list(range(1, 7 + raised.value.kept_lines))


def test_the_footer_after_a_torn_write_follows_the_last_whole_line(tmp_path: Path) -> None:
    # The torn line is cut off; the footer must go where the file now ends,
    # not where the torn write stopped (that left a run of NUL bytes before it).
    path = tmp_path / "t.jsonl"
    disk = FullDisk(room=10**9)
    transcript = writer(path, write=disk)
    prompt = Prompted(session_id="s1", prompt_id="p1", text="hi", at=at(0))
    transcript.write([opened(), *turn(1, "first turn")])
    disk.room = 150
    with pytest.raises(TranscriptWriteError) as raised:
        transcript.write([prompt, *turn(7, "second turn " * 20, message="m2", prompt="p2")])
    disk.room = 10**9
    transcript.write([closed(12, turns=2)])
    assert b"\0" not in path.read_bytes()
    read = read_transcript(files_of(path))
    assert read.problems == [] and read.torn_bytes == 0
    assert read.footer is not None and read.footer.raw["incomplete"]["lost_records"] == (
        7 - raised.value.kept_lines
    )


def test_after_a_write_error_nothing_more_is_written_and_the_footer_says_so(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    disk = FullDisk(room=10**9)
    transcript = writer(path, write=disk)
    transcript.write([opened(), *turn(1, "one")])
    disk.room = 0
    with pytest.raises(TranscriptWriteError):
        transcript.write(turn(7, "two", message="m2"))
    transcript.write(turn(13, "three", message="m3"))  # counted, not written: no gap on disk
    disk.room = 10**9  # space comes back: only the footer is written
    transcript.write([closed(18, turns=3)])
    read = read_transcript(files_of(path))
    assert [e.sequence for e in read.events()] == [1, 2, 3, 4, 5, 6]
    assert read.footer is not None
    assert read.footer.raw["incomplete"]["lost_records"] == 12
    assert "No space left on device" in read.footer.raw["incomplete"]["error"]


def test_a_directory_that_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with pytest.raises(TranscriptWriteError) as raised:
        writer(blocker / "t.jsonl").write([opened()])
    assert "cannot create" in str(raised.value)


def test_an_existing_transcript_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError):
        writer(path).write([opened()])
    assert path.read_text() == "precious\n"


def test_rotation_gzips_full_parts_and_continues_with_a_header(tmp_path: Path) -> None:
    path = tmp_path / "day" / "t.jsonl"
    transcript = writer(path, rotate_bytes=2_000)
    transcript.write([opened()])
    sequence = 1
    for number in range(8):
        transcript.write(turn(sequence, f"turn {number} " * 30, message=f"m{number}"))
        sequence += 6
    transcript.write([closed(sequence - 1, turns=8)])
    files = next(find_transcripts(tmp_path))
    assert len(files.parts) >= 2
    assert all(part.name.endswith(".jsonl.gz") for part in files.parts)
    headers = [json.loads(gzip.decompress(p.read_bytes()).split(b"\n")[0]) for p in files.parts]
    headers.append(_lines(files.active)[0])
    assert [h["transcript"]["part"] for h in headers] == list(range(len(files.parts) + 1))
    assert {h["transcript"]["id"] for h in headers} == {"t"}
    read = read_transcript(files)
    assert read.problems == []
    assert [e.sequence for e in read.events()] == list(range(1, sequence))
    assert read.footer is not None and read.footer.count("parts") == len(files.parts) + 1


def test_an_event_without_secrets_is_written_from_its_shared_encoding(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    plain = event(1, TextDelta(message_id="m1", text="nothing to hide"))
    writer(path).write([opened(), plain])
    assert path.read_bytes().split(b"\n")[1] == b'{"event":' + plain.json() + b"}"


def test_a_secret_named_field_is_redacted_even_in_plain_looking_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    leaky = event(1, TextDelta(message_id="m1", text="ok"), **{"vendor/env": {"password": "x1"}})
    writer(path).write([opened(), leaky])
    (record,) = [line for line in _lines(path) if "event" in line]
    assert record["event"]["extensions"]["vendor/env"] == {"password": "[REDACTED:secret_field]"}  # type: ignore[index]
    assert record["redacted"] == {"count": 1, "patterns": ["secret_field"]}


def test_bytes_written_and_fsync_times_are_counted_for_the_metrics(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    syncs: list[int] = []
    transcript = writer(path, sync=syncs.append)
    transcript.write([opened(), *turn(1, "hello"), closed(6)])
    written, fsyncs = transcript.take_io()
    assert written == path.stat().st_size and len(fsyncs) == len(syncs) >= 2
    assert transcript.take_io() == (0, [])
