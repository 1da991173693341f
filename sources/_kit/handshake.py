"""The one error for an agent that exits before its handshake is done.

Every JSON-RPC source opens a session with a few requests; when the agent
dies meanwhile, the pump fails the waiting request with `AgentGone`, and
the driver turns that into `ProcessExited` carrying the exit status and
the stderr tail (what the user needs to see why: a missing login, a bad
flag). The status is waited for a bounded time: a process that closed its
output but lingers is reported as "unknown" rather than hanging the open.
"""

from __future__ import annotations

import asyncio

from ...pipeline.errors import CorralError, ErrorKind
from .._process import AgentProcess

__all__ = ["EXIT_WAIT", "exit_status", "handshake_exit"]

EXIT_WAIT = 5.0


async def exit_status(process: AgentProcess, wait: float = EXIT_WAIT) -> str:
    """The process's exit status, or "unknown" if it has not exited within `wait`."""
    try:
        async with asyncio.timeout(wait):
            return await process.wait()
    except TimeoutError:
        return "unknown"


async def handshake_exit(process: AgentProcess, *, agent: str, wire: str) -> CorralError:
    """`agent` exited during its `wire` handshake: ProcessExited with status and stderr."""
    status = await exit_status(process)
    return CorralError(
        ErrorKind.PROCESS_EXITED,
        f"{agent} exited during the {wire} handshake (status {status})",
        status=status,
        stderr=process.stderr_tail(),
    )
