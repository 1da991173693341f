"""Reading an agent's plan usage on a short-lived process of that agent.

`plan_usage` is asked outside any session, so a source that can tell
starts its agent for the question alone: `ask_briefly` spawns it (its own
process group, stderr drained into a tail), lets the source's `converse`
coroutine speak the wire, and stops the group (EOF, SIGTERM, SIGKILL, by
the leader's pid) whatever happened, all under one deadline. What flows
out is the source's answer, or one `CorralError`: `HandshakeTimeout` when
the deadline passed, `ProcessExited` (with the stderr tail) when the agent
left before answering, or whatever `converse` raised. No error leaves as
an exception group: `converse` runs inside a task group (for the pumps a
wire needs), and its outcome is carried out of it before anything is
raised.

`used_percent` clamps an agent's percentage into the schema's `uint8`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from ..pipeline.errors import AgentGone, CorralError, ErrorKind
from ._process import AgentProcess

__all__ = ["Converse", "ask_briefly", "used_percent"]

T = TypeVar("T")
Converse = Callable[[AgentProcess, asyncio.TaskGroup], Awaitable[T]]

STOP_GRACE = 2.0  # seconds from EOF to SIGKILL once the answer is in (or the deadline passed)


def used_percent(value: float) -> int:
    return min(max(round(value), 0), 255)


async def ask_briefly(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    converse: Converse[T],
    agent: str,
    deadline: float,
    cwd: str | None = None,
) -> T:
    """Start `argv`, run `converse` on it within `deadline` seconds, stop it; its answer."""
    answer: list[T] = []
    failure: CorralError | None = None
    async with asyncio.TaskGroup() as tasks:
        try:
            process = await AgentProcess.spawn(
                argv, cwd=cwd or env.get("HOME") or os.getcwd(), env=env, tasks=tasks
            )
        except CorralError as error:
            failure = error
        else:
            try:
                async with asyncio.timeout(deadline):
                    answer.append(await converse(process, tasks))
            except TimeoutError:
                failure = CorralError(
                    ErrorKind.HANDSHAKE_TIMEOUT,
                    f"{agent} did not tell its plan usage within {deadline:g} s",
                )
            except AgentGone:
                status = await process.stop(STOP_GRACE)
                failure = _exited(process, agent, status)
            except CorralError as error:
                failure = error
            finally:
                await process.stop(STOP_GRACE)  # a second stop finds the group gone
    if failure is not None:
        raise failure
    return answer[0]


def _exited(process: AgentProcess, agent: str, status: str) -> CorralError:
    return CorralError(
        ErrorKind.PROCESS_EXITED,
        f"{agent} exited before telling its plan usage (status {status})",
        status=status,
        stderr=process.stderr_tail(),
    )
