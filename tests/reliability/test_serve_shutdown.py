"""`corral serve` ending, as a real process, whatever the agents and the app do.

Shutdown (EOF on stdin, SIGTERM) never waits on a command forever: an
`open` stuck in its handshake is abandoned and its agent stopped, a
`generate` still running is withdrawn, a pending permission request is
closed; every command gets its one reply, every opened session its
`closed`, and the process exits within the close grace plus a second.
And an app that floods commands without reading its replies meets a full
pipe, not a growing corral.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.schema import check_line
from tests.support.serve import ServeProcess
from tests.support.waiting import until

from .helpers import alive, children_of
from .test_serve_process import open_and_prompt, rss_kib

GRACE = 5.0  # ActorSettings.close_grace
SLACK = 2.5  # a loaded two-core machine
BOUND = GRACE + 1.0 + SLACK
ASK = {
    "Emit": {
        "RequestOpened": {
            "Permission": {
                "id": "r1",
                "tool": {
                    "id": "tool1",
                    "kind": "Execute",
                    "title": "make",
                    "status": "Pending",
                    "input": {"Command": {"command": "make", "cwd": None}},
                    "diffs": [],
                    "locations": [],
                },
                "options": ["AllowOnce", "DenyOnce"],
            }
        }
    }
}
END = {"End": {"Completed": {"source": "Protocol"}}}
WriteScript = Callable[[dict[str, Any]], str]
SERVE = [sys.executable, "-m", "corral.actors.cli", "serve"]


def text_delta(body: str) -> dict[str, Any]:
    return {"Emit": {"TextDelta": {"message_id": "m1", "text": body}}}


def stuck_agent(folder: Path) -> dict[str, Any]:
    """An ad-hoc ACP agent that never answers `initialize`, ignores SIGTERM and EOF."""
    path = folder / "stuck_agent.py"
    path.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stdin.buffer.read()\n"
        "while True:\n"
        "    time.sleep(60)\n"
    )
    return {"acp": {"name": "stuck", "path": sys.executable, "args": [str(path)]}}


async def shut_down(serve: ServeProcess, how: str) -> tuple[int, float]:
    """EOF or SIGTERM; the exit code and how long the exit took."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    if how == "eof":
        await serve.close_stdin()
    else:
        os.kill(serve.process.pid, signal.SIGTERM)
    code = await serve.finish(timeout=60)
    return code, loop.time() - started


def replies(serve: ServeProcess) -> Counter[int]:
    return Counter(
        line["id"] for line in serve.lines if line.get("id") is not None and "hello" not in line
    )


@pytest.mark.slow
@pytest.mark.parametrize("how", ["eof", "sigterm"])
async def test_shutdown_abandons_a_handshake_that_never_completes(tmp_path: Path, how: str) -> None:
    serve = await ServeProcess.start()  # the default handshake timeout: 30 s
    try:
        await serve.wait_for(lambda line: "hello" in line)
        frame_id = await serve.send(
            {"cmd": "open", "agent": stuck_agent(tmp_path), "dir": str(tmp_path)}
        )
        # the agent runs, mid-handshake
        await until(lambda: children_of(serve.process.pid), 30, what="the agent")
        agents = children_of(serve.process.pid)
        code, took = await shut_down(serve, how)
    finally:
        await serve.kill()
    assert code == 0, serve.stderr.decode()[-3000:]
    assert took < BOUND, f"exit took {took:.1f} s"
    assert replies(serve) == {frame_id: 1}
    (reply,) = [line for line in serve.lines if line.get("id") == frame_id]
    assert "error" in reply
    assert not [line for line in serve.lines if "closed" in line]  # it never opened
    assert not any(alive(pid) for pid in agents)


async def test_a_signal_answers_the_commands_still_waiting_for_a_slot(tmp_path: Path) -> None:
    mute = tmp_path / "mute_agent.py"  # never answers `initialize`; leaves at EOF
    mute.write_text("import sys\nsys.stdin.buffer.read()\n")
    agent = {"acp": {"name": "mute", "path": sys.executable, "args": [str(mute)]}}
    serve = await ServeProcess.start("--max-in-flight", "1")
    try:
        await serve.wait_for(lambda line: "hello" in line)
        frames = [{"id": 1, "cmd": "open", "agent": agent, "dir": str(tmp_path)}]
        frames += [{"id": n, "cmd": "info", "session": "s1"} for n in (2, 3, 4)]
        await serve.send_raw(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
        # the open holds the only slot
        await until(lambda: children_of(serve.process.pid), 30, what="the agent")
        code, took = await shut_down(serve, "sigterm")
    finally:
        await serve.kill()
    assert code == 0, serve.stderr.decode()[-3000:]
    assert took < BOUND, f"exit took {took:.1f} s"
    assert replies(serve) == {1: 1, 2: 1, 3: 1, 4: 1}
    waiting = [line for line in serve.lines if line.get("id") in (2, 3, 4)]
    assert all(line["error"]["kind"] == "SessionClosed" for line in waiting)


@pytest.mark.parametrize("how", ["eof", "sigterm"])
async def test_shutdown_withdraws_a_pending_permission_and_closes_the_session(
    serve_mock: Any, tmp_path: Path, how: str
) -> None:
    serve = await serve_mock({"turns": [[ASK, "AwaitAnswer", END]]})
    first = (await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)}))["id"]
    second = (await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)}))["id"]
    await serve.ok({"cmd": "prompt", "session": first, "text": "build"})
    await serve.wait_event(first, "RequestOpened")
    code, took = await shut_down(serve, how)
    assert code == 0, serve.stderr.decode()[-3000:]
    assert took < BOUND, f"exit took {took:.1f} s"
    assert set(replies(serve).values()) == {1}
    assert sorted(line["closed"] for line in serve.lines if "closed" in line) == [first, second]
    kinds = serve.kinds(first)
    assert kinds.index("RequestClosed") < kinds.index("TurnEnded")
    ended = next(e for e in serve.events(first) if "TurnEnded" in e["kind"])
    assert ended["kind"]["TurnEnded"]["stop"] == "Cancelled"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["eof", "sigterm"])
async def test_shutdown_ends_a_stuck_agent_and_a_running_generate(
    serve_mock: Any, write_script: WriteScript, tmp_path: Path, how: str
) -> None:
    # A process-mode agent that ignores EOF and SIGTERM, mid-turn; a generate
    # waiting on a turn that never ends.
    script = {
        "process": True,
        "ignore_close": True,
        "turns": [
            [{"Emit": {"TextDelta": {"message_id": "m1", "text": "hm"}}}, {"Sleep": 600_000}]
        ],
    }
    serve = await serve_mock(script)
    sid = (await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)}))["id"]
    await serve.ok({"cmd": "prompt", "session": sid, "text": "think"})
    await serve.wait_event(sid, "TextDelta")
    generating = await serve.send(
        {"cmd": "generate", "agent": "mock", "dir": str(tmp_path), "prompt": "and you?"}
    )
    await until(lambda: len(children_of(serve.process.pid)) >= 2, 30, what="both agents")
    agents = children_of(serve.process.pid)
    code, took = await shut_down(serve, how)
    assert code == 0, serve.stderr.decode()[-3000:]
    assert took < BOUND, f"exit took {took:.1f} s"
    assert set(replies(serve).values()) == {1}
    assert "error" in next(line for line in serve.lines if line.get("id") == generating)
    assert [line["closed"] for line in serve.lines if "closed" in line] == [sid]
    assert not any(alive(pid) for pid in agents)


async def exited(process: asyncio.subprocess.Process, timeout: float) -> None:
    """Until the process is reaped; not `wait()`, which on Python 3.11 also waits
    for its stdout to reach EOF, and our reader of it is paused (we do not read)."""
    await until(lambda: process.returncode is not None, timeout, what="the process reaped")


FILLED = 512 * 1024  # more than the pipe (64 KiB) and our paused reader (128 KiB) take


def written_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


@pytest.mark.slow
async def test_a_signal_ends_serve_even_when_the_app_has_stopped_reading(
    write_script: WriteScript, tmp_path: Path
) -> None:
    chatty = {
        "process": True,
        "turns": [
            [
                {"Repeat": {"times": 30_000, "steps": [text_delta("0123456789" * 10)]}},
                END,
            ]
        ],
    }
    process = await asyncio.create_subprocess_exec(
        *SERVE,
        "--mock",
        write_script(chatty),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024,  # our reader pauses past twice this
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        await open_and_prompt(process, tmp_path)
        async with asyncio.timeout(30):
            # Now the app reads nothing more: wait until corral's writes stop (blocked),
            # past what the pipe and our reader hold: a pause before the agent has
            # started streaming is not a blocked writer.
            samples: list[int] = []
            while len(samples) < 5 or len(set(samples[-5:])) > 1 or samples[-1] < FILLED:
                samples.append(written_bytes(process.pid))
                await asyncio.sleep(0.1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        process.send_signal(signal.SIGTERM)
        await exited(process, 60)
        took = loop.time() - started
        assert process.stderr is not None
        stderr = await process.stderr.read()
    finally:
        if process.returncode is None:
            process.kill()
            await exited(process, 30)
        await process.stdout.read()  # to EOF: a pipe left open outlives the test's loop
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert took < BOUND, f"exit took {took:.1f} s"
    assert b"read nothing" in stderr  # corral says why the rest of its output is lost


# ---- an app that floods commands and does not read -----------------------------------

FLOOD = 100_000


@pytest.mark.slow
async def test_a_flood_of_commands_is_held_in_the_pipe_not_in_corral(
    write_script: WriteScript,
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "corral.actors.cli",
        "serve",
        "--mock",
        write_script({}),
        "--no-transcripts",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024,  # our reader pauses past twice this: the app does not read
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        check_line(orjson.loads(await process.stdout.readline()))  # hello
        baseline = rss_kib(process.pid)
        frames = b"".join(
            json.dumps({"id": n, "cmd": "info", "session": "s1"}).encode() + b"\n"
            for n in range(FLOOD)
        )
        process.stdin.write(frames)  # all of it, held by our transport until corral reads
        pending = process.stdin.transport.get_write_buffer_size
        # corral stops reading: what we hold stops shrinking, far from empty.
        samples: list[int] = []
        async with asyncio.timeout(120):
            while len(samples) < 10 or len(set(samples[-10:])) > 1:
                samples.append(pending())
                await asyncio.sleep(0.1)
        assert pending() > len(frames) // 2, "corral read far more than it could answer"
        grown = rss_kib(process.pid) - baseline
        assert grown < 64 * 1024, f"corral grew by {grown} KiB while the app did not read"
        # The app reads: every command gets exactly one reply.
        seen: Counter[int] = Counter()
        async with asyncio.timeout(300):
            while len(seen) < FLOOD:
                line = orjson.loads(await process.stdout.readline())
                assert line["error"]["kind"] == "UnknownSession"
                seen[line["id"]] += 1
            await process.stdin.drain()
            process.stdin.close()
            rest = await process.stdout.read()
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await exited(process, 30)
    assert rest == b"" and set(seen.values()) == {1}
    check_line({"id": 0, "error": {"kind": "UnknownSession", "message": "x"}})
