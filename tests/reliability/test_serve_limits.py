"""`corral serve` as a real process against a machine that says no: the metrics
port is already taken, the transcript disk is full. Each is a clear error in
its place; neither loses an event the app should see."""

from __future__ import annotations

import asyncio
import errno
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from corral.sinks.transcript import find_transcripts, read_transcript

from tests.support.disks import tmpfs
from tests.support.schema import check_line

from .helpers import END, text
from .test_serve_process import open_and_prompt, send

FLOOD_TEXTS = 300
FLOOD = {
    "process": True,
    "turns": [
        [
            {"Repeat": {"times": FLOOD_TEXTS, "steps": [text("z" * 500)]}},
            {"Emit": {"MessageEnded": {"message_id": "m1"}}},
            END,
        ]
    ],
}


def serve_argv(script: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "corral.actors.cli", "serve", "--mock", str(script), *extra]


def write_script(tmp_path: Path, script: object) -> Path:
    path = tmp_path / "script.json"
    path.write_bytes(orjson.dumps(script))
    return path


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_metrics_port_in_use_stops_serve_at_once_with_a_clear_error(
    tmp_path: Path, taken_port: int
) -> None:
    script = write_script(tmp_path, FLOOD)
    done = subprocess.run(
        serve_argv(script, "--metrics", f"127.0.0.1:{taken_port}", "--no-transcripts"),
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert done.stdout == b""  # no hello: the app sees no half-started corral
    message = done.stderr.decode()
    assert f"127.0.0.1:{taken_port}" in message and "already in use" in message
    assert "Traceback" not in message


@pytest.mark.skipif(shutil.which("mount") is None, reason="no mount command")
async def test_a_full_transcript_disk_is_reported_and_the_app_loses_nothing(
    tmp_path: Path,
) -> None:
    script = write_script(tmp_path, FLOOD)
    with tmpfs(tmp_path / "small", "size=64k") as disk:
        process = await asyncio.create_subprocess_exec(
            *serve_argv(script, "--transcripts", str(disk)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=16 * 1024 * 1024,
        )
        assert process.stdout is not None and process.stderr is not None
        lines = await open_and_prompt(process, tmp_path)
        async with asyncio.timeout(60):
            while not any("TurnEnded" in str(line) for line in lines[-1:]):
                line = orjson.loads(await process.stdout.readline())
                check_line(line)
                lines.append(line)
        await send(process, {"id": 3, "cmd": "close", "session": "s1"})
        assert process.stdin is not None
        process.stdin.close()
        async with asyncio.timeout(60):
            rest, stderr = await process.communicate()
        assert process.returncode == 0
        for raw in rest.splitlines():
            line = orjson.loads(raw)
            check_line(line)
            lines.append(line)
        kinds = [line["event"]["kind"] for line in lines if "event" in line]
        texts = [kind for kind in kinds if "TextDelta" in kind]
        assert len(texts) == FLOOD_TEXTS  # the app lost nothing
        failures = [
            line["event"]
            for line in lines
            if "event" in line and "corral/sink_failed" in line["event"]["extensions"]
        ]
        assert len(failures) == 1
        assert failures[0]["extensions"]["corral/sink_failed"]["errno"] == errno.ENOSPC
        assert failures[0]["kind"]["Diagnostic"]["level"] == "Error"
        assert "No space left on device" in stderr.decode()  # and in corral's own output
        assert {"closed": "s1"} in lines
        (written,) = find_transcripts(disk)
        read = read_transcript(written)
        assert read.problems == [] and read.torn_bytes == 0  # what was kept is valid
