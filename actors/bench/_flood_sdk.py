"""`acp-flood`, the peer's side: the ACP Python SDK's client reading the same flood.

This process spawns the flood agent with the SDK (`acp.spawn_agent_process`),
initializes, opens a session (`new_session`), and sends one prompt; its
`Client.session_update` callback counts the `agent_message_chunk` updates
and checks that each one's text is the chunk the agent sent at its place,
as corral's app does with its TextDeltas.

Measured over the window from sending the prompt to having both its
result and every chunk (the SDK runs each notification's handler in a
task of its own, so the last ones may land after the result): this
process's CPU (`time.process_time`, all its threads; the agent is a child
process, not in it) and the wall time.

The SDK is a development dependency, not one of corral's: only this
module imports it, and `_acp_flood` runs it only when it is installed.

Run as `python -m corral.actors.bench._flood_sdk N`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from typing import Any, cast

import acp
from acp.schema import AgentMessageChunk, TextContentBlock

from ._acp_flood import FloodFailed, FloodRun, agent_command, write_run
from ._flood_agent import chunk_text

__all__ = ["flood_through_sdk"]


class _CountingClient:
    """The client's callbacks: only `session_update` (the SDK answers -32601 for the rest)."""

    def __init__(self, expected: int) -> None:
        self.updates = 0
        self.in_order = True
        self.all_in = asyncio.Event()
        self.expected = expected

    def on_connect(self, conn: acp.Agent) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if not isinstance(update, AgentMessageChunk):
            return
        text = update.content.text if isinstance(update.content, TextContentBlock) else None
        self.in_order = self.in_order and text == chunk_text(self.updates)
        self.updates += 1
        if self.updates == self.expected:
            self.all_in.set()


async def flood_through_sdk(updates: int) -> FloodRun:
    client = _CountingClient(updates)
    program, *args = agent_command(updates)
    with tempfile.TemporaryDirectory() as work:
        spawned = acp.spawn_agent_process(
            cast(acp.Client, client), program, *args, env=dict(os.environ), cwd=work
        )
        async with asyncio.timeout(600), spawned as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=work, mcp_servers=[])
            cpu_before = time.process_time()
            started = time.perf_counter()
            result = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("flood")]
            )
            await _all_in(client)
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_before
    if result.stop_reason != "end_turn":
        raise FloodFailed(f"the SDK's prompt ended with {result.stop_reason}, not end_turn")
    return FloodRun(
        side="sdk",
        updates=client.updates,
        in_order=client.in_order,
        cpu_s=cpu,
        wall_s=wall,
        parts={"client": cpu},
    )


async def _all_in(client: _CountingClient) -> None:
    """Every chunk's handler has run; or, 30 s after the result, what came is what counts."""
    if client.expected:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await client.all_in.wait()


def main() -> None:
    flags = argparse.ArgumentParser(prog="flood-sdk")
    flags.add_argument("updates", type=int)
    args = flags.parse_args()
    import uvloop

    write_run(uvloop.run(flood_through_sdk(args.updates)))


if __name__ == "__main__":
    main()
