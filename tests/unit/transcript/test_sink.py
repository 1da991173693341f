"""The async sink: disk I/O off the loop, backpressure, failures heard once, no stall."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from corral.pipeline.channels import Channel
from corral.pipeline.records import SinkItem
from corral.sinks.transcript import Archive, TranscriptSettings, TranscriptSink, read_transcript
from corral.sinks.transcript._paths import files_of

from tests.support.waiting import settled

from .helpers import closed, opened, turn, writer


class GatedDisk:
    """os.write that blocks (in the worker thread) until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def __call__(self, fd: int, data: bytes) -> int:
        if not self.gate.is_set():
            self.waiting.set()
            self.gate.wait(timeout=30)
        return os.write(fd, data)


async def test_a_slow_disk_fills_the_channel_and_blocks_the_sender_nothing_is_dropped(
    tmp_path: Path,
) -> None:
    disk = GatedDisk()
    path = tmp_path / "t.jsonl"
    sink = TranscriptSink(writer(path, write=disk), session_id="s1")
    channel: Channel[SinkItem] = Channel(4, name="s1/transcript")
    consumer = asyncio.create_task(sink.run(channel))
    items: list[SinkItem] = [opened()]
    for number in range(10):
        items += turn(1 + 6 * number, f"turn {number}", message=f"m{number}")
    items.append(closed(60, turns=10))
    sender = asyncio.create_task(_send_all(channel, items))
    await asyncio.to_thread(disk.waiting.wait, 10)
    await settled()
    assert channel.statistics().waiting_senders == 1
    assert not sender.done()  # backpressure: the producer waits for the disk
    disk.gate.set()
    await asyncio.wait_for(sender, 10)
    await asyncio.wait_for(consumer, 10)
    read = read_transcript(files_of(path))
    assert [e.sequence for e in read.events()] == list(range(1, 61))
    assert read.footer is not None and read.footer.reason == "closed"


async def _send_all(channel: Channel[SinkItem], items: list[SinkItem]) -> None:
    for item in items:
        await channel.send(item)
    channel.close()


class Disk:
    """os.write until `full` is set, then ENOSPC."""

    def __init__(self) -> None:
        self.full = False

    def __call__(self, fd: int, data: bytes) -> int:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return os.write(fd, data)


async def test_a_write_error_is_heard_once_and_the_sink_keeps_draining(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    disk = Disk()
    transcript = writer(path, write=disk)
    sink = TranscriptSink(transcript, session_id="s1")
    heard: list[tuple[str, str, Mapping[str, object]]] = []
    sink.on_failure(lambda name, message, fields: heard.append((name, message, fields)))
    channel: Channel[SinkItem] = Channel(2, name="s1/transcript")
    consumer = asyncio.create_task(sink.run(channel))
    await channel.send(opened())
    fits = turn(1, "fits")
    for item in fits:
        await channel.send(item)
    async with asyncio.timeout(10):
        await sink.caught_up(1 + len(fits))
    assert transcript.counts.events == 6
    disk.full = True
    for number in range(1, 20):  # never blocked by the dead disk
        for item in turn(1 + 6 * number, "lost", message=f"m{number}"):
            await channel.send(item)
    await channel.send(closed(120, turns=20))
    channel.close()
    await asyncio.wait_for(consumer, 10)
    assert len(heard) == 1
    name, message, fields = heard[0]
    assert name == "transcript"
    assert "the disk is full" in message and "valid up to event 6" in message
    assert fields["errno"] == errno.ENOSPC and fields["last_sequence"] == 6
    read = read_transcript(files_of(path))
    assert [e.sequence for e in read.events()] == [1, 2, 3, 4, 5, 6]
    assert read.problems == [] and read.torn_bytes == 0


async def test_a_listener_registered_after_the_failure_still_hears_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    sink = TranscriptSink(writer(blocker / "t.jsonl"), session_id="s1")
    channel: Channel[SinkItem] = Channel(2, name="s1/transcript")
    await channel.send(opened())
    channel.close()
    await sink.run(channel)
    heard: list[str] = []
    sink.on_failure(lambda name, message, fields: heard.append(message))
    assert len(heard) == 1 and "cannot create" in heard[0]


async def test_a_transcript_that_could_not_be_created_says_so(tmp_path: Path) -> None:
    disk = Disk()
    disk.full = True  # the header itself does not fit
    path = tmp_path / "t.jsonl"
    sink = TranscriptSink(writer(path, write=disk), session_id="s1")
    heard: list[str] = []
    sink.on_failure(lambda name, message, fields: heard.append(message))
    await _run_session(sink, [opened(), *turn(1, "lost"), closed(6)])
    (message,) = heard
    assert message.startswith("the transcript of session s1 could not be created: ")
    assert "the disk is full" in message and "valid up to" not in message
    assert not path.exists()


async def test_a_channel_that_ends_without_closed_leaves_no_footer(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = TranscriptSink(writer(path), session_id="s1")
    channel: Channel[SinkItem] = Channel(16, name="s1/transcript")
    for item in [opened(), *turn(1, "cut short")]:
        await channel.send(item)
    channel.close()
    await sink.run(channel)
    read = read_transcript(files_of(path))
    assert read.footer is None and len(read.events()) == 6


class RecordingMetrics:
    def __init__(self) -> None:
        self.written = 0
        self.fsyncs: list[float] = []
        self.errors: list[str] = []

    def transcript_written(self, nbytes: int) -> None:
        self.written += nbytes

    def transcript_fsynced(self, seconds: float) -> None:
        self.fsyncs.append(seconds)

    def sink_error(self, sink: str) -> None:
        self.errors.append(sink)


async def _run_session(sink: TranscriptSink, items: list[SinkItem]) -> None:
    channel: Channel[SinkItem] = Channel(64, name="s1/transcript")
    for item in items:
        channel.try_send(item)
    channel.close()
    await asyncio.wait_for(sink.run(channel), 10)


async def test_the_metrics_hear_the_bytes_and_the_fsyncs(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    metrics = RecordingMetrics()
    sink = TranscriptSink(writer(path), session_id="s1", metrics=metrics)
    await _run_session(sink, [opened(), *turn(1, "hello"), closed(6)])
    assert metrics.written == path.stat().st_size
    assert len(metrics.fsyncs) >= 2 and all(s >= 0 for s in metrics.fsyncs)
    assert metrics.errors == []


async def test_the_metrics_count_a_failed_transcript_once(tmp_path: Path) -> None:
    disk = Disk()
    disk.full = True
    metrics = RecordingMetrics()
    sink = TranscriptSink(
        writer(tmp_path / "t.jsonl", write=disk), session_id="s1", metrics=metrics
    )
    await _run_session(sink, [opened(), *turn(1, "lost"), closed(6)])
    assert metrics.errors == ["transcript"]


async def test_caught_up_returns_once_the_records_sent_so_far_are_on_disk(tmp_path: Path) -> None:
    disk = GatedDisk()
    path = tmp_path / "t.jsonl"
    sink = TranscriptSink(writer(path, write=disk), session_id="s1")
    channel: Channel[SinkItem] = Channel(64, name="s1/transcript")
    consumer = asyncio.create_task(sink.run(channel))
    items: list[SinkItem] = [opened(), *turn(1, "hello")]
    for item in items:
        channel.try_send(item)
    waiter = asyncio.create_task(sink.caught_up(len(items)))
    await asyncio.to_thread(disk.waiting.wait, 10)
    assert not waiter.done()  # the disk still holds the header
    disk.gate.set()
    await asyncio.wait_for(waiter, 10)
    assert [e.sequence for e in read_transcript(files_of(path)).events()] == [1, 2, 3, 4, 5, 6]
    channel.close()
    await asyncio.wait_for(consumer, 10)
    await asyncio.wait_for(sink.caught_up(1000), 1)  # an ended sink holds nobody


class CountingWriter:
    """Counts the batches the sink hands to the writer."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.batches: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def write(self, items: list[SinkItem]) -> None:
        self.batches.append(len(items))
        self.inner.write(items)  # type: ignore[attr-defined]


async def test_small_batches_linger_for_more_records(tmp_path: Path) -> None:
    counting = CountingWriter(writer(tmp_path / "t.jsonl"))
    sink = TranscriptSink(counting, session_id="s1", linger=0.2)  # type: ignore[arg-type]
    channel: Channel[SinkItem] = Channel(16, name="s1/transcript")
    consumer = asyncio.create_task(sink.run(channel))
    events = turn(1, "hello")
    channel.try_send(opened())
    await settled()
    assert len(channel) == 0  # the sink took the first record, and lingers
    for item in events[:3]:
        channel.try_send(item)
    await sink.caught_up(4)
    assert counting.batches == [4]  # one hand-off to the thread, not two
    channel.close()
    await asyncio.wait_for(consumer, 10)


async def test_a_turn_end_goes_to_disk_without_lingering(tmp_path: Path) -> None:
    counting = CountingWriter(writer(tmp_path / "t.jsonl"))
    sink = TranscriptSink(counting, session_id="s1", linger=3600)  # type: ignore[arg-type]
    channel: Channel[SinkItem] = Channel(16, name="s1/transcript")
    consumer = asyncio.create_task(sink.run(channel))
    events = turn(1, "hello")  # ends with TurnEnded, then StatusChanged(Idle)
    for item in [opened(), *events[:5]]:
        channel.try_send(item)
    async with asyncio.timeout(10):
        await sink.caught_up(6)
    channel.try_send(closed(5))
    channel.close()
    await asyncio.wait_for(consumer, 10)
    assert sum(counting.batches) == 7


async def test_secrets_learnt_before_the_sessions_files_exist_are_masked_in_them(
    tmp_path: Path,
) -> None:
    """The Runtime may tell the archive a session's secrets before it makes its sink:
    they wait for it, and its transcript and wire recording mask them from the start."""
    secret = "tr0ub4dor" + "&3-horse"
    archive = Archive(TranscriptSettings(dir=tmp_path, record_wire=True))
    try:
        archive.learn_secrets("s1", [("DB_PASSWORD", secret)])
        sink = archive.sink_factory("s1", "mock", str(tmp_path))
        assert archive.wire is not None
        archive.wire.wire_line("s1", "in", f'{{"said": "{secret}"}}'.encode())
        channel: Channel[SinkItem] = Channel(16, name="s1/transcript")
        consumer = asyncio.create_task(sink.run(channel))
        for item in [opened(), *turn(1, f"the password is {secret}"), closed(6)]:
            await channel.send(item)
        channel.close()
        await asyncio.wait_for(consumer, 10)
    finally:
        archive.close()
    files = sorted(await asyncio.to_thread(lambda: list(tmp_path.rglob("*.jsonl"))))
    assert len(files) == 2, files  # the transcript and its wire recording
    for path in files:
        on_disk = path.read_text()
        assert secret not in on_disk and "[REDACTED:session_secret]" in on_disk, path.name
