"""The life of a `corral serve` process, as a real subprocess: stdin and stdout
may be anything (a pipe, a file, `/dev/null`, a socket, a terminal); the
handshake has a bound; a session that fails inside corral still ends as the
protocol says; the smaller points of fidelity (`configure` replies null, an
unknown agent is NotInstalled). Every line corral writes is validated."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.actors.engine import EngineSettings
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.pipeline.commands import AcpRef
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Event,
    Failed,
    PermissionAnswer,
    PermissionChoice,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    TextDelta,
    TurnEnded,
)

from tests.reliability.helpers import alive, children_running
from tests.support.crashing_serve import crashing_catalog
from tests.support.schema import check_line
from tests.support.serve import ServeProcess
from tests.support.waiting import until

WriteScript = Callable[[dict[str, Any]], str]
SERVE = [sys.executable, "-m", "corral.actors.cli", "serve"]


def commands(*frames: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)


def parsed(output: bytes) -> list[dict[str, Any]]:
    lines = [orjson.loads(raw) for raw in output.splitlines() if raw.strip()]
    for line in lines:
        check_line(line)
    return lines


def run_serve(script: str, **streams: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*SERVE, "--mock", script], stderr=subprocess.PIPE, timeout=60, check=False, **streams
    )


# ---- stdin and stdout may be anything -----------------------------------------------


def test_stdin_from_dev_null_is_a_plain_eof(write_script: WriteScript) -> None:
    done = run_serve(write_script({}), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert [next(iter(line)) for line in parsed(done.stdout)] == ["hello"]


def test_commands_from_a_file_and_lines_to_a_file(
    write_script: WriteScript, tmp_path: Path
) -> None:
    given = tmp_path / "commands.jsonl"
    given.write_bytes(
        commands(
            {"id": 1, "cmd": "open", "agent": "mock", "dir": str(tmp_path)},
            {"id": 2, "cmd": "discover"},
        )
    )
    written = tmp_path / "lines.jsonl"
    with given.open("rb") as stdin, written.open("wb") as stdout:
        done = run_serve(write_script({}), stdin=stdin, stdout=stdout)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = parsed(written.read_bytes())
    replies = {line["id"]: line for line in lines if "id" in line}
    assert replies[1]["ok"]["id"] == "s1" and "ok" in replies[2]
    assert [line["closed"] for line in lines if "closed" in line] == ["s1"]


def test_lines_to_dev_null(write_script: WriteScript, tmp_path: Path) -> None:
    stdin = commands(
        {"id": 1, "cmd": "open", "agent": "mock", "dir": str(tmp_path)},
        {"id": 2, "cmd": "discover"},
    )
    done = run_serve(write_script({}), input=stdin, stdout=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def _read_lines(
    receive: Callable[[], bytes], until: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Lines from `receive` (validated) until one satisfies `until`."""
    lines: list[dict[str, Any]] = []
    pending = b""
    while not any(until(line) for line in lines):
        chunk = receive()
        assert chunk, f"corral's output ended early; lines so far: {lines}"
        *complete, pending = (pending + chunk).split(b"\n")
        lines += parsed(b"\n".join(complete))
    return lines


def test_stdin_and_stdout_on_a_socket(write_script: WriteScript, tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        process = subprocess.Popen(
            [*SERVE, "--mock", write_script({})],
            stdin=theirs,
            stdout=theirs,
            stderr=subprocess.PIPE,
        )
        theirs.close()
        try:
            ours.settimeout(30)
            ours.sendall(commands({"id": 1, "cmd": "open", "agent": "mock", "dir": str(tmp_path)}))
            lines = _read_lines(lambda: ours.recv(65536), lambda line: line.get("id") == 1)
            assert [line["ok"]["id"] for line in lines if line.get("id") == 1] == ["s1"]
            ours.shutdown(socket.SHUT_WR)  # EOF on corral's stdin
            lines += _read_lines(lambda: ours.recv(65536), lambda line: "closed" in line)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert [line["closed"] for line in lines if "closed" in line] == ["s1"]


def test_stdin_and_stdout_on_a_terminal(write_script: WriteScript) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*SERVE, "--mock", write_script({})],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    try:
        os.write(leader, commands({"id": 1, "cmd": "discover"}))
        # The terminal echoes what was typed; corral's own lines are the valid ones.
        seen = b""
        while b'"id":1,"ok"' not in seen:
            chunk = os.read(leader, 65536)
            assert chunk, "the terminal closed before the reply"
            seen += chunk
        os.write(leader, b"\x04")  # Ctrl-D at the start of a line: EOF
        assert process.wait(timeout=30) == 0
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait()
    ours = [
        raw for raw in seen.replace(b"\r", b"").split(b"\n") if b'"hello"' in raw or b'"ok"' in raw
    ]
    assert len(parsed(b"\n".join(ours))) == 2


# ---- the handshake's bound ----------------------------------------------------------


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


def test_the_default_handshake_timeout_is_thirty_seconds_and_stall_after_two_minutes() -> None:
    assert RuntimeSettings().handshake_timeout == 30.0
    assert EngineSettings().stall_after == 120.0


async def test_handshake_timeout_is_settable_on_the_command_line(tmp_path: Path) -> None:
    serve = await ServeProcess.start("--handshake-timeout", "1")
    try:
        started = asyncio.get_running_loop().time()
        reply = await serve.request(
            {"cmd": "open", "agent": stuck_agent(tmp_path), "dir": str(tmp_path)}, timeout=20
        )
        took = asyncio.get_running_loop().time() - started
        assert reply["error"]["kind"] == "HandshakeTimeout"
        assert took < 10  # 1 s, then the stuck agent's stop (within the close grace)
        assert await serve.finish() == 0
    finally:
        await serve.kill()


def agents_running() -> list[int]:
    """Our children that run the stuck agent (not a probe of corral's own)."""
    return children_running(os.getpid(), b"stuck_agent.py")


async def test_leaving_the_runtime_abandons_an_open_whose_handshake_is_in_flight(
    tmp_path: Path,
) -> None:
    ref = stuck_agent(tmp_path)["acp"]
    agent = AcpRef(name=ref["name"], path=ref["path"], args=tuple(ref["args"]))
    loop = asyncio.get_running_loop()
    async with Runtime(transcripts=False) as rt:
        opening = asyncio.create_task(rt.open(agent, dir=str(tmp_path)))
        await until(lambda: bool(agents_running()), timeout=30)
        (pid,) = agents_running()
        started = loop.time()
    took = loop.time() - started
    with pytest.raises(CorralError) as raised:
        await opening
    assert raised.value.kind is ErrorKind.SESSION_CLOSED
    assert took < 5.0 + 1.0 + 2.5  # the close grace, not the 30 s handshake timeout
    assert not alive(pid)


# ---- a session that fails inside corral ---------------------------------------------


async def test_a_crash_inside_corral_ends_the_session_as_the_protocol_says(
    tmp_path: Path,
) -> None:
    serve = await ServeProcess.start(command=("-m", "tests.support.crashing_serve"))
    try:
        opened = await serve.ok({"cmd": "open", "agent": "crashy", "dir": str(tmp_path)})
        sid = opened["id"]
        await serve.ok({"cmd": "prompt", "session": sid, "text": "go"})
        await serve.wait_event(sid, "RequestOpened")
        answer = {"Permission": "AllowOnce"}
        await serve.ok({"cmd": "answer", "session": sid, "request": "r1", "answer": answer})
        await serve.wait_for(lambda line: line.get("closed") == sid)
        assert await serve.finish() == 0
    finally:
        await serve.kill()
    tail = [line for line in serve.lines if line.get("session") == sid or "closed" in line]
    assert tail[0]["error"]["kind"] == "ProtocolFailed"
    assert tail[1:] == [{"closed": sid}]
    events = serve.events(sid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    ended = [e["kind"]["TurnEnded"] for e in events if "TurnEnded" in e["kind"]]
    assert len(ended) == 1 and "Failed" in ended[0]["stop"]
    assert events[-1]["kind"] == {"StatusChanged": "Idle"}
    # Nothing of the session follows its `closed`.
    after = serve.lines[serve.lines.index({"closed": sid}) + 1 :]
    assert not [line for line in after if line.get("event", {}).get("session_id") == sid]


async def test_a_crash_inside_corral_ends_the_python_stream_with_a_failed_turn() -> None:
    async with Runtime(catalog=crashing_catalog(), transcripts=False) as rt:
        session = await rt.open("crashy", dir=".")
        await session.prompt("go")
        events: list[Event] = []
        async with asyncio.timeout(30):
            async for event in session.events():
                events.append(event)
                if isinstance(event.kind, RequestOpened):
                    await session.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
            await session.wait_closed()
    assert session.failure is not None and session.failure.kind is ErrorKind.PROTOCOL_FAILED
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert [e.kind.text for e in events if isinstance(e.kind, TextDelta)] == ["hello"]
    ends = [e.kind for e in events if isinstance(e.kind, TurnEnded)]
    assert len(ends) == 1 and isinstance(ends[0].stop, Failed)
    assert events[-1].kind == StatusChanged(status=SessionStatus.IDLE)


# ---- fidelity -----------------------------------------------------------------------


async def test_an_unknown_agent_is_not_installed_with_where_corral_looked(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({})
    reply = await serve.request({"cmd": "open", "agent": "nobody", "dir": str(tmp_path)})
    error = reply["error"]
    assert error["kind"] == "NotInstalled"
    assert error["searched"] and error["install_hint"]
    probe = await serve.request({"cmd": "probe", "agent": "nobody"})
    assert probe["error"]["kind"] == "NotInstalled"
    assert await serve.finish() == 0


async def test_configure_replies_null(serve_mock: Any, tmp_path: Path) -> None:
    option = {
        "id": "model",
        "name": "Model",
        "kind": {
            "Select": {"choices": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}
        },
        "current": "a",
        "live": True,
    }
    serve = await serve_mock({"options": [option]})
    sid = (await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)}))["id"]
    frame = {"cmd": "configure", "session": sid, "option": "model", "value": "b"}
    reply = await serve.request(frame)
    assert reply == {"id": reply["id"], "ok": None}
    assert await serve.finish() == 0
