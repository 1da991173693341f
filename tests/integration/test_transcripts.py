"""The transcript archive end to end: live sessions through the Runtime and a real
`corral serve`, crashes, slow, full and read-only disks, the archive commands, imports
through the agents' own readers, the HTML page in a real browser, replay against the
live wire."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import html
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.actors.importing import register_cli as register_import_cli
from corral.actors.replay import ReplaySession, imported_installation, replay
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.session import ActorSettings
from corral.pipeline.driver import Emitted, PromptSent, ReplayItem, TurnFinished
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Completed,
    Event,
    PermissionAnswer,
    PermissionChoice,
    RequestOpened,
    TextDelta,
    TurnEnded,
    kind_from_wire,
)
from corral.sinks.lines import LineSink, LineWriter
from corral.sinks.metrics import Metrics
from corral.sinks.transcript import (
    Archive,
    TranscriptIndex,
    TranscriptSettings,
    WriterSettings,
    find_transcripts,
    read_transcript,
    register_cli,
)
from corral.sinks.transcript._cli import replay_lines
from corral.sinks.transcript._format import PromptRecord
from corral.sinks.transcript._paths import files_of
from corral.sources.mock import parse_script

from tests.support.disks import tmpfs
from tests.support.schema import check_line
from tests.support.waiting import until
from tests.unit.transcript.readers import SECRETS, TEST_READERS, WORDS, planted_copy

REPO = Path(__file__).resolve().parents[2]

TOOL = {"id": "tool1", "kind": "Execute", "title": "ls", "status": "Pending",
        "input": {"Command": {"command": "ls -la", "cwd": None}}, "output": None,
        "diffs": [], "locations": [], "raw": None}  # fmt: skip
DONE = {**TOOL, "status": "Completed", "output": "a.txt\nb.txt\n"}
PERMISSION_TURN = [
    {"Emit": {"ToolUpdated": TOOL}},
    {"Emit": {"RequestOpened": {"Permission": {"id": "r1", "tool": TOOL,
                                               "options": ["AllowOnce", "DenyOnce"],
                                               "detail": None}}}},
    "AwaitAnswer",
    {"Emit": {"ToolUpdated": DONE}},
    {"Emit": {"TextDelta": {"message_id": "m1", "text": "Two files: a.txt and b.txt"}}},
    {"Emit": {"MessageEnded": {"message_id": "m1"}}},
    {"Usage": {"used_tokens": 1200, "cost_usd": 0.002}},
    {"End": {"Completed": {"source": "Protocol"}}},
]  # fmt: skip
SCRIPT = {"turns": [PERMISSION_TURN]}


def _runtime(**options: Any) -> Runtime:
    """A Runtime with only the archive the test made (not its default one)."""
    return Runtime(transcripts=False, **options)


class Capture:
    """A ByteStream that keeps everything written to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        self.data += data


class Session:
    """One mock session through a Runtime with the archive, the app on the line protocol."""

    def __init__(self, root: Path, script: dict[str, Any], **archive: Any) -> None:
        self.reports: list[str] = []
        self.archive = Archive(
            TranscriptSettings(dir=root, **archive.pop("settings", {})),
            report=self.reports.append,
            **archive,
        )
        self.script = parse_script(script)
        self.app = Capture()

    async def run(self, workdir: Path, prompt: str = "list the files", answer: bool = True) -> None:
        writer = LineWriter(self.app)
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(writer.run())
            async with _runtime(mock=self.script, sinks=[self.archive.sink_factory]) as runtime:
                release = asyncio.Event()
                release.set()
                session = await runtime.open(
                    "mock", dir=str(workdir), app_sink=LineSink(writer, release)
                )
                await session.prompt(prompt)
                if answer:
                    await until(lambda: b"RequestOpened" in self.app.data, 30)
                    await session.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
                await until(lambda: b'"TurnEnded"' in self.app.data, 30)
                await session.close()
                await session.wait_closed()
            writer.close()
        self.archive.close()

    def events(self) -> list[dict[str, Any]]:
        """The events the app saw (every line it got checked against the schema)."""
        lines = [orjson.loads(line) for line in bytes(self.app.data).split(b"\n") if line]
        for line in lines:
            check_line(line)
        return [line["event"] for line in lines if "event" in line]


# ---- the transcript of a live session -------------------------------------------------


async def test_a_live_session_is_archived_whole_with_its_decision(tmp_path: Path) -> None:
    session = Session(tmp_path / "archive", SCRIPT)
    await session.run(tmp_path)
    (files,) = find_transcripts(tmp_path / "archive")
    read = read_transcript(files)
    assert read.problems == [] and read.footer is not None and read.footer.reason == "closed"
    assert [e.to_wire() for e in read.events()] == session.events()
    assert read.footer.count("decisions") == 1 and read.footer.count("events") == len(
        session.events()
    )
    assert session.reports == []


async def test_a_live_session_keeps_each_prompt_redacted_and_the_app_sees_no_new_line(
    tmp_path: Path,
) -> None:
    openai = SECRETS["@@OPENAI_KEY@@"]
    session = Session(tmp_path / "archive", SCRIPT)
    await session.run(tmp_path, prompt=f"list the walrus files\nwith {openai}")
    (files,) = find_transcripts(tmp_path / "archive")
    read = read_transcript(files)
    (prompt,) = [r for r in read.records if isinstance(r, PromptRecord)]
    assert prompt.prompt_id == "p1"
    assert prompt.text == "list the walrus files\nwith [REDACTED:openai_key]"
    assert openai.encode() not in files.active.read_bytes()
    assert read.footer is not None and read.footer.count("prompts") == 1
    assert b"walrus" not in bytes(session.app.data)  # the app's lines are what they were
    assert [e.to_wire() for e in read.events()] == session.events()
    with TranscriptIndex(tmp_path / "archive") as index:
        index.update()
        (hit,) = index.search("walrus")
    assert hit.transcript_id == files.transcript_id and hit.role == "prompt"


async def test_replaying_a_transcript_through_the_line_writer_gives_the_app_s_lines(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path / "archive", SCRIPT)
    await session.run(tmp_path)
    (files,) = find_transcripts(tmp_path / "archive")
    replayed = Capture()
    await replay_lines(read_transcript(files), LineWriter(replayed), version="test")
    hello, *lines = bytes(replayed.data).splitlines(keepends=True)
    assert b'"hello"' in hello
    assert b"".join(lines) == bytes(session.app.data)
    for line in bytes(replayed.data).splitlines():
        import json

        check_line(json.loads(line))


async def test_the_replay_runner_gives_the_events_a_live_session_gave(tmp_path: Path) -> None:
    session = Session(tmp_path / "archive", {"turns": [PERMISSION_TURN[4:]]})
    await session.run(tmp_path, prompt="hello", answer=False)
    live = session.events()
    items: list[ReplayItem] = [PromptSent(text="hello")]
    for step in PERMISSION_TURN[4:7]:
        body = step.get("Emit") or {"ContextUsage": {**step["Usage"], "window_tokens": None}}  # type: ignore[union-attr]
        items.append(Emitted(kind=kind_from_wire(body)))
    items.append(TurnFinished(stop=Completed()))
    replay_session = ReplaySession(
        session_id=live[0]["session_id"],
        agent=imported_installation("mock"),
        started_ns=0,
    )
    replayed = [r.to_wire() for r in replay(items, session=replay_session) if isinstance(r, Event)]

    def shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(e["sequence"], e["turn_info"], e["kind"], e["extensions"]) for e in events]

    assert shape(replayed) == shape(live)


async def _one_turn(runtime: Runtime, workdir: Path) -> None:
    """Open a mock session, run its permission turn (the app allows), close it."""
    async with runtime as rt:
        session = await rt.open("mock", dir=str(workdir))
        await session.prompt("list the files")
        async with asyncio.timeout(30):
            async for event in session.events():
                match event.kind:
                    case RequestOpened():
                        await session.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
                    case TurnEnded():
                        break
        await session.close()


async def test_the_runtime_keeps_transcripts_under_corral_home_by_default(
    corral_home: Path, tmp_path: Path
) -> None:
    await _one_turn(Runtime(mock=parse_script(SCRIPT)), tmp_path)
    (files,) = find_transcripts(corral_home / "transcripts")
    read = read_transcript(files)
    assert read.footer is not None and read.footer.reason == "closed" and read.turns == 1


async def test_a_runtime_without_transcripts_writes_nothing(
    corral_home: Path, tmp_path: Path
) -> None:
    await _one_turn(Runtime(mock=parse_script(SCRIPT), transcripts=False), tmp_path)
    assert not (corral_home / "transcripts").exists()


def _sample(metrics: Metrics, name: str) -> float:
    body, _ = metrics.render()
    for line in body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in the exposition")


async def test_the_archive_reports_bytes_written_and_fsync_time_to_the_metrics(
    corral_home: Path, tmp_path: Path
) -> None:
    metrics = Metrics(version="test")
    await _one_turn(Runtime(mock=parse_script(SCRIPT), metrics=metrics), tmp_path)
    (files,) = find_transcripts(corral_home / "transcripts")
    assert _sample(metrics, "corral_transcript_bytes_total") == files.active.stat().st_size
    # --fsync turn: the header, the turn's end, the footer and the close
    assert _sample(metrics, "corral_transcript_fsync_seconds_count") >= 3


class GatedDisk:
    """os.write that blocks (in the archive's worker thread) until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, fd: int, data: bytes) -> int:
        self.gate.wait(timeout=60)
        return os.write(fd, data)


async def test_a_slow_disk_slows_the_session_and_nothing_is_dropped(tmp_path: Path) -> None:
    disk = GatedDisk()
    archive = Archive(
        TranscriptSettings(dir=tmp_path / "archive"),
        writer=WriterSettings(corral_version="test", write=disk),
    )
    small = RuntimeSettings(
        actor=ActorSettings(driver_capacity=4, events_capacity=4, sink_capacity=4)
    )
    seen: list[Event] = []
    try:
        async with Runtime(mock=parse_script(FLOOD), settings=small, transcripts=archive) as rt:
            session = await rt.open("mock", dir=str(tmp_path))
            await session.prompt("flood")
            channels = {channel.name: channel for channel in rt.channels()}
            # The disk holds the transcript's first write: its channel fills, the fan-out
            # waits on it, then the engine, then the agent's source. The app waits too.
            await until(lambda: channels["s1/transcript"].statistics().waiting_senders == 1, 30)
            await until(lambda: channels["s1/driver"].statistics().waiting_senders == 1, 30)
            assert channels["s1/driver"].statistics().depth == 4
            disk.gate.set()
            async with asyncio.timeout(60):
                async for event in session.events():
                    seen.append(event)
                    if isinstance(event.kind, TurnEnded):
                        break
            await session.close()
    finally:
        disk.gate.set()
        archive.close()
    (files,) = find_transcripts(tmp_path / "archive")
    kept = read_transcript(files).events()
    assert sum(isinstance(e.kind, TextDelta) for e in kept) == 400  # nothing dropped
    assert [e.sequence for e in kept] == list(range(1, len(kept) + 1))
    assert kept[: len(seen)] == seen


async def test_no_planted_secret_reaches_the_transcript_or_the_wire_recording(
    tmp_path: Path,
) -> None:
    openai, bearer, github = SECRETS.values()
    deltas = [f"the key is {openai[:9]}", openai[9:24], f"{openai[24:]} and Bearer {bearer}"]
    command = f"GITHUB_TOKEN={github} gh repo list"
    tool = {**TOOL, "title": "gh", "input": {"Command": {"command": command, "cwd": None}}}
    script = {"process": True, "turns": [[
        *[{"Emit": {"TextDelta": {"message_id": "m1", "text": text}}} for text in deltas],
        {"Emit": {"MessageEnded": {"message_id": "m1"}}},
        {"Emit": {"ToolUpdated": {**tool, "status": "Completed", "output": command}}},
        {"End": {"Completed": {"source": "Protocol"}}},
    ]]}  # fmt: skip
    root = tmp_path / "archive"
    settings = TranscriptSettings(dir=root, record_wire=True)
    await _one_turn(Runtime(mock=parse_script(script), transcripts=settings), tmp_path)
    (files,) = find_transcripts(root)
    on_disk = b"".join(path.read_bytes() for path in root.rglob("*.jsonl"))
    assert b".wire.jsonl" not in files.active.name.encode() and b'"in"' in on_disk
    for secret in SECRETS.values():
        assert secret.encode() not in on_disk
    read = read_transcript(files)
    assert read.footer is not None and read.footer.count("redactions") >= 4
    assert "[REDACTED:" in "".join(
        e.kind.text for e in read.events() if isinstance(e.kind, TextDelta)
    )


class FooterGate:
    """os.write that holds the footer (in the archive's thread) until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.holding = threading.Event()

    def __call__(self, fd: int, data: bytes) -> int:
        if b'"footer"' in data:
            self.holding.set()
            self.gate.wait(timeout=60)
        return os.write(fd, data)


async def test_once_the_app_can_see_closed_commands_get_session_closed(tmp_path: Path) -> None:
    disk = FooterGate()
    archive = Archive(
        TranscriptSettings(dir=tmp_path / "archive"),
        writer=WriterSettings(corral_version="test", write=disk),
    )
    try:
        async with Runtime(mock=parse_script(SCRIPT), transcripts=archive) as rt:
            session = await rt.open("mock", dir=str(tmp_path))
            await session.close()
            async with asyncio.timeout(30):
                async for _ in session.events():
                    pass  # the app's stream ends: it has seen `closed`
            await asyncio.to_thread(disk.holding.wait, 30)  # the transcript is not done yet
            with pytest.raises(CorralError) as refused:
                rt.session(session.id)
            assert refused.value.kind is ErrorKind.SESSION_CLOSED
            disk.gate.set()
    finally:
        disk.gate.set()
        archive.close()
    (files,) = find_transcripts(tmp_path / "archive")
    assert read_transcript(files).footer is not None


# ---- crashes ---------------------------------------------------------------------------

CHILD = r"""
import asyncio, os, sys, time
from pathlib import Path
from corral.pipeline.channels import Channel
from corral.sinks.transcript import FsyncPolicy, TranscriptSink, TranscriptWriter, WriterSettings
from tests.unit.transcript.helpers import closed, opened, turn

complete_lines = 0

def write(fd, data):
    # Records are written 7 bytes per call; once 13 whole lines (the header and
    # 12 events) are on disk, write part of the 14th, say so, and hang there.
    global complete_lines
    if complete_lines >= 13 and b"\n" not in data:
        os.write(fd, data)
        print("TORN", flush=True)
        time.sleep(3600)
    written = os.write(fd, data)
    complete_lines += data[:written].count(b"\n")
    return written

async def main(path):
    settings = WriterSettings(corral_version="test", fsync=FsyncPolicy.ALWAYS, write=write,
                              max_write=7)
    sink = TranscriptSink(TranscriptWriter(path=path, transcript_id="t", settings=settings),
                          session_id="s1")
    channel = Channel(64, name="s1/transcript")
    for item in [opened(), *turn(1, "one"), *turn(7, "two", message="m2"),
                 *turn(13, "three", message="m3"), closed(18, turns=3)]:
        channel.try_send(item)
    channel.close()
    await sink.run(channel)

asyncio.run(main(Path(sys.argv[1])))
"""


async def test_kill_9_mid_line_then_reopen_repairs_and_keeps_every_whole_event(
    tmp_path: Path,
) -> None:
    path = tmp_path / "archive" / "day" / "t.jsonl"
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(path), cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 120) == b"TORN\n"
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()
    assert not path.read_bytes().endswith(b"\n")
    before = read_transcript(files_of(path))
    assert before.torn_bytes == 7 and [e.sequence for e in before.events()] == list(range(1, 13))
    with TranscriptIndex(tmp_path / "archive") as index:
        update = index.update()
        (row,) = index.summaries()
    assert update.repaired == ["t"] and row.status == "interrupted"
    after = read_transcript(files_of(path))
    assert after.torn_bytes == 0 and after.problems == [] and after.torn_lines_cut == 1
    assert [e.sequence for e in after.events()] == list(range(1, 13))
    assert after.footer is not None and after.footer.count("torn_lines_cut") == 1


# ---- disks that say no -------------------------------------------------------------------


FLOOD = {
    "turns": [
        [
            {"Repeat": {"times": 400, "steps": [
                {"Emit": {"TextDelta": {"message_id": "m1", "text": "y" * 400}}}]}},
            {"Emit": {"MessageEnded": {"message_id": "m1"}}},
            {"End": {"Completed": {"source": "Protocol"}}},
        ]
    ]
}  # fmt: skip


@pytest.mark.skipif(shutil.which("mount") is None, reason="no mount command")
async def test_a_full_disk_is_a_clear_error_the_session_goes_on_and_the_file_stays_valid(
    tmp_path: Path,
) -> None:
    with tmpfs(tmp_path / "small", "size=64k") as root:
        session = Session(root, FLOOD)
        await session.run(tmp_path, answer=False)
        seen = session.events()
        content = [e for e in seen if "Diagnostic" not in e["kind"]]
        assert len(content) == 405  # the app lost nothing
        (report,) = session.reports  # what `corral` prints on stderr
        assert "No space left on device (the disk is full)" in report
        (diagnostic,) = [e for e in seen if "corral/sink_failed" in e["extensions"]]
        assert diagnostic["kind"]["Diagnostic"] == {"level": "Error", "message": report}
        assert diagnostic["extensions"]["corral/sink_failed"]["errno"] == errno.ENOSPC
        (files,) = find_transcripts(root)
        read = read_transcript(files)
        assert read.problems == [] and read.torn_bytes == 0
        events = read.events()
        assert 0 < len(events) < 405
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        assert f"valid up to event {len(events)}" in report


class FillingDisk:
    """os.write that takes `room` bytes, then says ENOSPC (the OS boundary, no mount)."""

    def __init__(self, room: int) -> None:
        self.room = room

    def __call__(self, fd: int, data: bytes) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, data[: self.room])
        self.room -= written
        return written


async def test_a_disk_that_fills_mid_session_is_a_clear_error_and_the_file_stays_valid(
    tmp_path: Path,
) -> None:
    root = tmp_path / "archive"
    writer = WriterSettings(corral_version="test", write=FillingDisk(64 * 1024))
    session = Session(root, FLOOD, writer=writer)
    await session.run(tmp_path, answer=False)
    seen = session.events()
    assert len([e for e in seen if "Diagnostic" not in e["kind"]]) == 405  # the app lost nothing
    (report,) = session.reports
    assert "No space left on device (the disk is full)" in report
    (diagnostic,) = [e for e in seen if "corral/sink_failed" in e["extensions"]]
    assert diagnostic["kind"]["Diagnostic"] == {"level": "Error", "message": report}
    (files,) = find_transcripts(root)
    read = read_transcript(files)
    assert read.problems == [] and read.torn_bytes == 0
    events = read.events()
    assert 0 < len(events) < 405
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert f"valid up to event {len(events)}" in report


async def test_a_read_only_directory_is_a_clear_error_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    root = tmp_path / "readonly"
    if os.geteuid() == 0:
        if shutil.which("mount") is None:
            pytest.skip("running as root and no mount command: cannot make a read-only directory")
        context: Any = tmpfs(root, "ro", "size=64k")
    else:
        root.mkdir()
        root.chmod(0o500)
        context = contextlib.nullcontext(root)
    with context:
        session = Session(root, SCRIPT)
        await session.run(tmp_path)
        # The session went on to its end; the failure, heard from the writer's
        # thread, may land before or after it.
        rest = [e for e in session.events() if "Diagnostic" not in e["kind"]]
        assert rest[-1]["kind"] == {"StatusChanged": "Idle"}
        (report,) = session.reports
        assert "cannot create" in report and "not writable" in report
        assert list(find_transcripts(root)) == []


async def test_a_sink_failure_becomes_an_error_diagnostic_the_app_sees(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # the archive's folder cannot be made: it is a file
    session = Session(blocker, SCRIPT)
    await session.run(tmp_path)
    events = session.events()
    (diagnostic,) = [e for e in events if isinstance(e["kind"], dict) and "Diagnostic" in e["kind"]]
    assert diagnostic["kind"]["Diagnostic"]["level"] == "Error"
    message = diagnostic["kind"]["Diagnostic"]["message"]
    assert message.startswith("the transcript of session s1 could not be created: ")
    failed = diagnostic["extensions"]["corral/sink_failed"]
    assert failed["sink"] == "transcript" and failed["path"].startswith(str(blocker))
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    # The session went on to its end (the failure, heard from the writer's
    # thread, may land before or after it).
    rest = [e for e in events if e is not diagnostic]
    assert rest[-1]["kind"] == {"StatusChanged": "Idle"}


# ---- corral serve, end to end ---------------------------------------------------------------


async def test_corral_serve_archives_the_session_and_transcripts_list_shows_it(
    serve_mock: Any, corral_home: Path, tmp_path: Path
) -> None:
    serve = await serve_mock(SCRIPT)  # a real `corral serve`; CORRAL_HOME is the test's own
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    sid = info["id"]
    await serve.ok({"cmd": "prompt", "session": sid, "text": "list the files"})
    await serve.wait_event(sid, "RequestOpened")
    await serve.ok(
        {"cmd": "answer", "session": sid, "request": "r1", "answer": {"Permission": "AllowOnce"}}
    )
    await serve.wait_event(sid, "TurnEnded")
    assert await serve.finish() == 0

    (files,) = find_transcripts(corral_home / "transcripts")
    read = read_transcript(files)
    assert read.problems == [] and read.footer is not None and read.footer.reason == "closed"
    assert [e.to_wire() for e in read.events()] == serve.events(sid)

    listed = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "corral.actors.cli", "transcripts", "list",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(listed.communicate(), 60)
    assert listed.returncode == 0, err.decode()
    header, row = out.decode().splitlines()
    assert header.split() == ["SESSION", "AGENT", "START", "TURNS", "TOKENS", "COST", "STATUS"]
    assert row.split()[0] == files.transcript_id
    assert row.split()[1] == "mock" and row.split()[-4:] == ["1", "1200", "$0.0020", "closed"]


async def test_corral_serve_with_no_transcripts_keeps_none(
    serve_mock: Any, corral_home: Path, tmp_path: Path
) -> None:
    serve = await serve_mock(SCRIPT, "--no-transcripts")
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    await serve.ok({"cmd": "close", "session": info["id"]})
    assert await serve.finish() == 0
    assert not (corral_home / "transcripts").exists()


async def test_corral_serve_transcripts_dir_moves_them(
    serve_mock: Any, corral_home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    serve = await serve_mock(SCRIPT, "--transcripts", str(elsewhere))
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    await serve.ok({"cmd": "close", "session": info["id"]})
    assert await serve.finish() == 0
    assert not (corral_home / "transcripts").exists()
    (files,) = find_transcripts(elsewhere)
    assert read_transcript(files).footer is not None


async def test_corral_serve_record_wire_keeps_both_directions_beside_the_transcript(
    serve_mock: Any, corral_home: Path, tmp_path: Path
) -> None:
    script = {"process": True, "turns": [PERMISSION_TURN[4:]]}  # an agent process, a real wire
    serve = await serve_mock(script, "--record-wire")
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    await serve.ok({"cmd": "prompt", "session": info["id"], "text": "hello"})
    await serve.wait_event(info["id"], "TurnEnded")
    assert await serve.finish() == 0
    (files,) = find_transcripts(corral_home / "transcripts")
    wire = files.active.with_name(f"{files.transcript_id}.wire.jsonl")
    records = [orjson.loads(line) for line in wire.read_bytes().splitlines()]
    assert {"in", "out"} <= {key for record in records for key in record if key != "at"}
    assert b"Two files: a.txt and b.txt" in wire.read_bytes()


async def test_corral_serve_no_redact_keeps_secrets_as_they_were(
    serve_mock: Any, corral_home: Path, tmp_path: Path
) -> None:
    github = SECRETS["@@GITHUB_TOKEN@@"]
    serve = await serve_mock({"turns": [PERMISSION_TURN[4:]]}, "--no-redact")
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    await serve.ok({"cmd": "prompt", "session": info["id"], "text": f"use {github}"})
    await serve.wait_event(info["id"], "TurnEnded")
    assert await serve.finish() == 0
    (files,) = find_transcripts(corral_home / "transcripts")
    read = read_transcript(files)
    assert read.header is not None and read.header.redaction is False
    assert [r.text for r in read.records if isinstance(r, PromptRecord)] == [f"use {github}"]
    assert b"REDACTED" not in files.active.read_bytes()


# ---- the archive commands ----------------------------------------------------------------


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="corral")
    commands = parser.add_subparsers(dest="command", required=True)
    register_cli(commands)
    register_import_cli(commands)
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    asyncio.run(Session(root, SCRIPT).run(tmp_path))
    return root


def test_list_show_search_and_replay(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli("transcripts", "list", "--transcripts", str(archive)) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["SESSION", "AGENT", "START", "TURNS", "TOKENS", "COST", "STATUS"]
    transcript_id = table[1].split()[0]
    assert table[1].split()[-1] == "closed"

    assert _cli("transcripts", "show", transcript_id[:20], "--transcripts", str(archive)) == 0
    shown = capsys.readouterr().out
    assert "Two files: a.txt and b.txt" in shown and "r1: allow_once by app" in shown

    assert _cli("transcripts", "search", "files", "--transcripts", str(archive)) == 0
    assert transcript_id in capsys.readouterr().out
    assert _cli("transcripts", "search", "zebra", "--transcripts", str(archive)) == 1

    assert _cli("transcripts", "replay", transcript_id, "--transcripts", str(archive)) == 0
    import json

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for line in lines:
        check_line(line)
    assert "hello" in lines[0] and "closed" in lines[-1]
    assert [line["event"]["sequence"] for line in lines[1:-1]] == list(range(1, len(lines) - 1))


def test_list_json_gives_one_object_per_transcript(
    archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert _cli("transcripts", "list", "--json", "--transcripts", str(archive)) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["agent"] == "mock" and row["status"] == "closed" and row["turns"] == 1
    assert row["cost_usd"] == 0.002 and row["tokens"] == 1200


def test_the_archive_commands_report_damage_they_find_on_stderr(
    archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files,) = find_transcripts(archive)
    header, *rest = files.active.read_bytes().splitlines(keepends=True)
    files.active.write_bytes(header + b"not json\n" + b"".join(rest))  # mid-file damage
    assert _cli("transcripts", "list", "--transcripts", str(archive)) == 0
    (problem,) = capsys.readouterr().err.splitlines()
    assert problem.startswith(f"corral: {files.transcript_id}: ")
    assert f"{files.active}:2: damaged record" in problem


def test_an_unknown_id_is_a_clear_error(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli("transcripts", "show", "nope", "--transcripts", str(archive)) == 1
    assert "no transcript matches 'nope'" in capsys.readouterr().err


def test_import_then_search_finds_a_word_from_each_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.actors.replay import NativeReaders

    monkeypatch.setattr(
        "corral.actors.importing._importer.NativeReaders", lambda: NativeReaders(TEST_READERS)
    )
    planted_copy(tmp_path / "native")
    root = str(tmp_path / "archive")
    assert _cli("import", str(tmp_path / "native"), "--transcripts", root) == 0
    assert capsys.readouterr().out.startswith("imported 3, skipped 0, failed 0")
    assert _cli("import", str(tmp_path / "native"), "--transcripts", root) == 0
    assert capsys.readouterr().out.startswith("imported 0, skipped 3, failed 0")
    for word in WORDS.values():
        assert _cli("transcripts", "search", word, "--transcripts", root) == 0
        assert word in capsys.readouterr().out.lower()


RECORDED = {  # recorded from the real CLIs by the agents' own issues; a word each says
    "claude": (REPO / "tests/fixtures/claude/transcripts/write_file.jsonl", "hello.txt"),
    "codex": (REPO / "tests/fixtures/codex/rollouts/plain.jsonl", "hi"),
    "copilot": (REPO / "tests/fixtures/copilot/real/copilot-1.0.102.events.jsonl", "touch"),
}


def test_recorded_transcripts_import_through_each_agent_s_own_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "archive"
    paths = [str(path) for path, _ in RECORDED.values()]
    assert _cli("import", *paths, "--transcripts", str(root)) == 0
    assert capsys.readouterr().out.startswith("imported 3, skipped 0, failed 0")
    assert _cli("import", *paths, "--transcripts", str(root)) == 0
    assert capsys.readouterr().out.startswith("imported 0, skipped 3, failed 0")
    with TranscriptIndex(root) as index:
        index.update()
        rows = {row.agent: row for row in index.summaries()}
        for agent, (_, word) in RECORDED.items():
            assert agent in {hit.agent for hit in index.search(word)}, (agent, word)
    assert set(rows) == set(RECORDED) and {row.status for row in rows.values()} == {"closed"}
    for files in find_transcripts(root):
        read = read_transcript(files)
        assert read.problems == [] and read.turns >= 1
        for event in read.events():
            check_line({"event": event.to_wire()})


def test_importing_many_files_shows_progress_and_says_why_each_skipped_one_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = REPO / "tests" / "fixtures"
    native = [
        fixtures / "claude/transcripts",
        fixtures / "codex/rollouts",
        fixtures / "copilot/sessions",
    ]
    wires = fixtures / "appserver"  # recorded app-server frames: not a transcript format
    sessions = [path for folder in native for path in folder.glob("*.jsonl")]
    strays = sorted(wires.glob("*.jsonl"))
    total = len(sessions) + len(strays)
    assert len(sessions) >= 10 and strays
    argv = ["import", *map(str, native), str(wires), "--progress"]
    assert _cli(*argv, "--transcripts", str(tmp_path / "archive")) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"imported {len(sessions)}, skipped {len(strays)}, failed 0\n")
    for stray in strays:
        assert f"{stray}: not a transcript format corral knows" in out
    shown = err.split("\r")
    assert any(f" 1/{total} " in step for step in shown)
    assert f" {total}/{total} " in shown[-1] and err.endswith("\n")


# ---- the HTML page in a browser --------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    """A headless Chromium: found, or Debian's installed by `.ci/chromium` (skip, or under
    CI fail, with its reason when neither works)."""
    try:
        found = subprocess.run(
            [str(REPO / ".ci" / "chromium")], capture_output=True, text=True, timeout=900
        )
    except subprocess.TimeoutExpired:
        reason = ".ci/chromium did not finish in 900 s"
    else:
        if found.returncode == 0:
            return found.stdout.strip().splitlines()[-1]
        reason = found.stderr.strip() or f".ci/chromium exited {found.returncode}"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _rendered_by_chromium(browser: str, archive: Path, transcript_id: str, workdir: Path) -> str:
    """The page `export --html` writes, as headless Chromium parsed and laid it out."""
    page = workdir / f"export-{uuid.uuid4().hex}.html"
    assert _cli("transcripts", "export", transcript_id, "--html", "-o", str(page),
                "--transcripts", str(archive)) == 0  # fmt: skip
    rendered = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         f"--user-data-dir={workdir / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert "<body" in rendered.stdout, rendered.stderr[-2000:]
    return rendered.stdout


def test_the_html_export_of_a_live_session_renders_in_headless_chromium(
    chromium: str, archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("transcripts", "list", "--transcripts", str(archive)) == 0
    transcript_id = capsys.readouterr().out.splitlines()[1].split()[0]
    dom = _rendered_by_chromium(chromium, archive, transcript_id, tmp_path)
    assert f"corral transcript {transcript_id}" in dom
    assert "Two files: a.txt and b.txt" in dom
    assert "Execute: ls [Completed]" in dom
    assert "r1: allow_once by app" in dom
    assert "ended: closed" in dom


_LAID_OUT = """<script>
const texts = [...document.querySelectorAll("section.block > p, section.block > pre")]
  .map((element) => [element.parentElement.classList[1], element.innerText]);
const out = document.createElement("output");
out.id = "laid-out";
out.textContent = JSON.stringify(texts);
document.body.append(out);
</script>"""


def test_the_html_export_keeps_the_line_breaks_of_prompts_and_answers(
    chromium: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = [
        {"Emit": {"TextDelta": {"message_id": "m1", "text": "Two files:\na.txt\nb.txt"}}},
        {"Emit": {"MessageEnded": {"message_id": "m1"}}},
        {"End": {"Completed": {"source": "Protocol"}}},
    ]
    root = tmp_path / "archive"
    asyncio.run(Session(root, {"turns": [answer]}).run(tmp_path, "list\nthe files", answer=False))
    (files,) = find_transcripts(root)
    page = tmp_path / "export.html"
    assert _cli("transcripts", "export", files.transcript_id, "--html", "-o", str(page),
                "--transcripts", str(root)) == 0  # fmt: skip
    # The page has no script of its own; this copy asks Chromium for each block's text
    # as laid out (`innerText` follows the CSS: `white-space: normal` joins the lines).
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", _LAID_OUT + "</body>"))
    rendered = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    found = re.search(r'<output id="laid-out">(.*?)</output>', rendered.stdout)
    assert found is not None, rendered.stderr[-2000:]
    texts = dict(orjson.loads(html.unescape(found.group(1))))
    assert texts["prompt"] == "list\nthe files"
    assert texts["assistant"] == "Two files:\na.txt\nb.txt"


def test_the_html_export_of_an_imported_session_shows_the_prompt_escaped(
    chromium: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from corral.actors.replay import NativeReaders

    monkeypatch.setattr(
        "corral.actors.importing._importer.NativeReaders", lambda: NativeReaders(TEST_READERS)
    )
    native = planted_copy(tmp_path / "native")
    archive = tmp_path / "archive"
    assert _cli("import", str(native["claude"]), "--transcripts", str(archive)) == 0
    transcript_id = capsys.readouterr().out.splitlines()[1].split()[-1]
    dom = _rendered_by_chromium(chromium, archive, transcript_id, tmp_path)
    assert "How fast does a pelican fly? Check notes.txt" in dom
    assert "A pelican cruises at about 56 km/h." in dom
    assert "pelicans cruise at 56 km/h" in dom
    assert "OPENAI_API_KEY=[REDACTED:openai_key]" in dom
