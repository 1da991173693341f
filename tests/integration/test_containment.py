"""Nothing an agent starts outlives its session, and a dead or mute agent ends it promptly.

The agent here is a small ACP agent (plain JSON-RPC on stdio, no SDK)
opened ad hoc through a real `corral serve` (`ServeProcess`: every line is
checked against the schema). Its prompts make it misbehave:

    escape        start a process that calls setsid() and double-forks
                  (so it leaves the agent's group and its parent), keeping
                  the agent's stdout; write its pid to escaped.pid; end the turn
    escape-die    the same, then exit (status 3) without answering
    hold-die      start a plain child that keeps the agent's stdout, write
                  its pid to held.pid, then exit (status 3) without answering
    mute          close stdout and keep running (ignoring stdin and SIGTERM)

Each test waits on conditions with bounded timeouts; the upper bounds are
the "promptly" of the issue (a few seconds), with slack for a busy machine.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from corral.sources._process import AgentProcess
from corral.sources._reaper import Family, become_subreaper

from tests.support.serve import ServeProcess
from tests.support.waiting import until

AGENT = textwrap.dedent(
    r"""
    import json, os, signal, subprocess, sys, time

    ESCAPER = '''
    import os, sys, time
    os.setsid()
    if os.fork():
        os._exit(0)
    if os.fork():
        os._exit(0)
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(300)
    '''

    def send(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def escape():
        subprocess.run([sys.executable, "-c", ESCAPER, os.path.abspath("escaped.pid")], check=True)
        while not os.path.exists("escaped.pid"):
            time.sleep(0.01)

    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "contained"}})
        elif method == "session/prompt":
            text = message["params"]["prompt"][0]["text"]
            if text == "escape":
                escape()
                send({"jsonrpc": "2.0", "id": ident, "result": {"stopReason": "end_turn"}})
            elif text == "escape-die":
                escape()
                os._exit(3)
            elif text == "hold-die":
                child = subprocess.Popen(["sleep", "300"])
                with open("held.pid", "w") as out:
                    out.write(str(child.pid))
                os._exit(3)
            elif text == "mute":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.close(1)
                time.sleep(300)
        elif ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "result": None})
    """
)

PROMPTLY = 15.0  # "within a few seconds" (about 2 to 5 here), with slack for a loaded machine


def gone(pid: int) -> bool:
    """The process no longer runs: absent, or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def until_gone(pid: int, timeout: float = PROMPTLY) -> None:
    await until(lambda: gone(pid), timeout, what=f"process {pid} to be gone")


def _pid_in(path: Path) -> int | None:
    try:
        with open(path, encoding="ascii") as written:
            return int(written.read())
    except FileNotFoundError:
        return None


async def read_pid(path: Path, timeout: float = 10.0) -> int:
    """The pid the agent wrote to `path` (it renames the file into place when done)."""
    await until(lambda: _pid_in(path) is not None, timeout, what=f"a pid in {path.name}")
    pid = _pid_in(path)
    assert pid is not None
    return pid


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    process = await ServeProcess.start(env={"CORRAL_HOME": str(tmp_path / "home")})
    await process.wait_for(lambda line: "hello" in line, timeout=30)
    try:
        yield process
    finally:
        await process.kill()


async def open_agent(serve: ServeProcess, tmp_path: Path) -> str:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    work = tmp_path / "work"
    work.mkdir()
    agent = {"acp": {"name": "contained", "path": sys.executable, "args": [str(script)]}}
    opened = await serve.ok({"cmd": "open", "agent": agent, "dir": str(work)})
    return str(opened["id"])


def session_error(serve: ServeProcess, session: str) -> dict[str, Any] | None:
    for line in serve.lines:
        if line.get("session") == session and "error" in line:
            return line["error"]  # type: ignore[no-any-return]
    return None


async def ended_by_itself(serve: ServeProcess, session: str) -> tuple[dict[str, Any], str]:
    """The failed turn's end, the session error and `closed`, all within PROMPTLY."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    ended = await serve.wait_event(session, "TurnEnded", timeout=PROMPTLY)
    await serve.wait_for(lambda line: line.get("closed") == session, timeout=PROMPTLY)
    assert loop.time() - started < PROMPTLY
    error = session_error(serve, session)
    assert error is not None
    reason = ended["kind"]["TurnEnded"]["stop"]
    return error, reason if isinstance(reason, str) else next(iter(reason))


async def test_a_setsid_double_forked_grandchild_ends_with_close(
    serve: ServeProcess, tmp_path: Path
) -> None:
    session = await open_agent(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": session, "text": "escape"})
    await serve.wait_event(session, "TurnEnded")
    escaped = await read_pid(tmp_path / "work" / "escaped.pid")
    assert not gone(escaped)
    await serve.ok({"cmd": "close", "session": session})
    await serve.wait_for(lambda line: line.get("closed") == session)
    await until_gone(escaped)
    assert await serve.finish() == 0


@pytest.mark.parametrize("prompt", ["escape-die", "hold-die"])
async def test_an_agent_that_dies_while_a_child_holds_its_stdout_ends_the_session(
    serve: ServeProcess, tmp_path: Path, prompt: str
) -> None:
    session = await open_agent(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": session, "text": prompt})
    error, reason = await ended_by_itself(serve, session)
    assert reason == "Failed"
    assert error["kind"] == "ProcessExited"
    assert error["status"] == "3"
    pid_file = "escaped.pid" if prompt == "escape-die" else "held.pid"
    await until_gone(await read_pid(tmp_path / "work" / pid_file))
    assert await serve.finish() == 0


@pytest.mark.slow  # about 5 s: the agent gets a second to exit, then a stop of 2 s
async def test_an_agent_that_closes_its_stdout_and_runs_on_ends_the_session(
    serve: ServeProcess, tmp_path: Path
) -> None:
    session = await open_agent(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": session, "text": "mute"})
    error, reason = await ended_by_itself(serve, session)
    assert reason == "Failed"
    assert error["kind"] in ("ProcessExited", "ProtocolFailed")
    assert "closed its output" in error["status"]
    assert await serve.finish() == 0


# ---- the family itself, on real processes -----------------------------------------

DOUBLE_FORK = textwrap.dedent(
    """
    import os, sys, time
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork():
            os._exit(0)
        os.write(write, str(os.getpid()).encode() + b"\\n")
        time.sleep(300)
        os._exit(0)
    print(os.read(read, 100).decode().strip(), flush=True)
    time.sleep(300)
    """
)


async def test_stop_ends_a_grandchild_that_left_the_group() -> None:
    assert become_subreaper()  # as a Runtime does when it starts
    async with asyncio.TaskGroup() as tasks:
        agent = await AgentProcess.spawn(
            [sys.executable, "-c", DOUBLE_FORK], cwd=".", env=dict(os.environ), tasks=tasks
        )
        grandchild = int((await agent.read()).split()[0])
        assert os.getpgid(grandchild) != agent.pid  # out of the group: killpg misses it
        assert not gone(grandchild)
        assert grandchild in agent.family.scan()
        await agent.stop(grace=1.0)
        await until_gone(grandchild)


async def test_a_family_never_claims_a_process_that_does_not_descend_from_it() -> None:
    stranger = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        async with asyncio.TaskGroup() as tasks:
            agent = await AgentProcess.spawn(
                [sys.executable, "-c", "import time; time.sleep(30)"],
                cwd=".",
                env=dict(os.environ),
                tasks=tasks,
            )
            assert stranger.pid not in agent.family.scan()
            await agent.stop(grace=0.5)
        assert stranger.returncode is None and not gone(stranger.pid)
    finally:
        stranger.kill()
        await stranger.wait()


def test_a_family_is_never_rooted_at_init_or_at_corral_itself() -> None:
    token = Family.new_token()
    assert Family.environment(token) == {"CORRAL_FAMILY": token}
    assert Family.new_token() != token
    for root in (0, 1, os.getpid()):
        with pytest.raises(ValueError):
            Family(root, token)
