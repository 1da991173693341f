"""AgentProcess: its own process group, a bounded stderr tail, no orphans."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

from corral.sources._process import AgentProcess

from tests.support.waiting import until

STUBBORN = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    print(child.pid, flush=True)
    sys.stdin.close()
    time.sleep(600)
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


async def test_stop_kills_an_agent_that_ignores_eof_and_sigterm_and_its_children() -> None:
    async with asyncio.TaskGroup() as tasks:
        agent = await AgentProcess.spawn(
            [sys.executable, "-c", STUBBORN], cwd=".", env=dict(os.environ), tasks=tasks
        )
        child_pid = int((await agent.read()).split()[0])
        assert alive(child_pid)
        loop = asyncio.get_running_loop()
        started = loop.time()
        status = await agent.stop(grace=1.0)
        assert loop.time() - started < 5
        assert status == "signal 9 (SIGKILL)"
        await until(lambda: not alive(child_pid), timeout=5, what="the child to be gone")


async def test_an_agent_that_honours_eof_exits_cleanly_on_stop() -> None:
    async with asyncio.TaskGroup() as tasks:
        agent = await AgentProcess.spawn(
            [sys.executable, "-c", "import sys; sys.stdin.read()"],
            cwd=".",
            env=dict(os.environ),
            tasks=tasks,
        )
        assert await agent.stop(grace=5.0) == "0"


async def test_the_stderr_tail_keeps_the_last_lines_only() -> None:
    code = "import sys\nfor i in range(5000): print('line', i, file=sys.stderr)\nsys.exit(3)"
    async with asyncio.TaskGroup() as tasks:
        agent = await AgentProcess.spawn(
            [sys.executable, "-c", code], cwd=".", env=dict(os.environ), tasks=tasks
        )
        assert await agent.wait() == "3"
    tail = agent.stderr_tail().splitlines()
    assert tail[-1] == "line 4999" and len(tail) == 40
    assert agent.stderr_bytes > 40_000


async def test_a_missing_executable_is_not_installed() -> None:
    from corral.pipeline.errors import CorralError, ErrorKind

    async with asyncio.TaskGroup() as tasks:
        try:
            await AgentProcess.spawn(["/nonexistent/agent"], cwd=".", env={}, tasks=tasks)
        except CorralError as error:
            assert error.kind is ErrorKind.NOT_INSTALLED
        else:
            raise AssertionError("spawn should fail")
