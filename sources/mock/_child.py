"""The mock agent in process mode: the parent side, a real stdio source.

It launches `python -m corral.sources.mock.agent` in its own process group,
sends the script and then each command as a JSON line, and reads driver
events back through the same sans-IO path a real agent's source uses:
`JsonLinesDecoder` (size cap, `\\n` only) then `decode_event`. A line that is
not JSON or too long becomes the driver kit's `WireProblem` Warning (with
`corral/decode_error`); one that is not a mock event an Info `Diagnostic`
(with `corral/unknown_frame` and the raw frame) — never silence. Both are
counted by the kit's `tally` where they are found (what the script itself
emits is not). When stdout ends, the exit status and the stderr tail
become `AgentExited`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

import orjson

from ...pipeline import driver
from ...pipeline.channels import BrokenChannel, Channel
from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ...pipeline.errors import AgentGone
from ...pipeline.events import ShapeError
from ...pipeline.sizes import item_size
from ...pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from .._kit.driver import spawn_agent, unknown
from .._kit.problems import WireProblem, tally
from .._process import AgentProcess
from ._driver import MockDriver
from ._script import MockScript
from ._wire import decode_event, encode_command

__all__ = ["ProcessMockDriver"]

MAX_LINE = 16 * 1024 * 1024
RAW_LINE = "mock/raw_line"
FRAMES_BYTES = 8 * 1024 * 1024  # decoded lines held before reading pauses (one larger: alone)


class ProcessMockDriver:
    def __init__(
        self,
        script: MockScript,
        spec: driver.LaunchSpec,
        telemetry: SessionTelemetry = NULL_TELEMETRY,
        *,
        max_line: int = MAX_LINE,
    ) -> None:
        self._script = script
        self._spec = spec
        self._telemetry = telemetry
        self._max_line = max_line
        self._process: AgentProcess | None = None
        self._frames: Channel[driver.DriverEvent] = Channel(
            64, name=f"{spec.session_id}/mock-child", max_bytes=FRAMES_BYTES, size=item_size
        )

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def start(self, tasks: asyncio.TaskGroup) -> driver.Handshake:
        argv = [sys.executable, "-m", "corral.sources.mock.agent", *self._spec.args]
        env = {**os.environ, **dict(self._spec.env)}
        self._process = await spawn_agent(self._spec, argv, env, tasks, self._telemetry)
        await self._write({"Script": self._script.source})
        tasks.create_task(self._read(self._process), name=f"{self._spec.session_id}-mock-read")
        return await MockDriver(self._script, self._spec).start(tasks)

    async def _read(self, process: AgentProcess) -> None:
        decoder = JsonLinesDecoder(max_line=self._max_line)
        try:
            while chunk := await process.read():
                for item in decoder.feed(chunk):
                    await self._frames.send(self._translate(item))
            for item in decoder.end():
                await self._frames.send(self._translate(item))
            status = await process.wait()
            await self._frames.send(driver.AgentExited(status=status, stderr=process.stderr_tail()))
        except BrokenChannel:
            pass  # stopped: nobody reads any more
        finally:
            self._frames.close()

    def _translate(self, item: dict[str, object] | NotJson | Oversized) -> driver.DriverEvent:
        if isinstance(item, NotJson | Oversized):
            problem = WireProblem.from_decoder(item)
            return self._tally(problem.event(speaker="the agent", wire="JSON", raw_key=RAW_LINE))
        if self._telemetry.records_wire:
            self._telemetry.wire_line("in", orjson.dumps(item))
        try:
            return decode_event(item)
        except ShapeError as error:
            frame_type = next(iter(item), "?") if len(item) == 1 else "?"
            message = f"unknown mock frame: {error}"
            return self._tally(unknown(frame_type, message, **{"mock/raw_frame": item}))

    def _tally(self, event: driver.Emitted) -> driver.Emitted:
        tally(self._telemetry, event)
        return event

    async def run(self, events_out: driver.EventSink) -> None:
        async for event in self._frames:
            await events_out.send(event)

    async def _write(self, message: dict[str, object]) -> None:
        assert self._process is not None
        line = orjson.dumps(message)
        if self._telemetry.records_wire:
            self._telemetry.wire_line("out", line)
        await self._process.write(line + b"\n")

    async def send(self, command: driver.DriverCommand) -> None:
        with contextlib.suppress(AgentGone):  # `run` reports the exit
            await self._write(encode_command(command))

    async def stop(self, grace: float) -> None:
        if self._process is not None:
            await self._process.stop(grace)
        self._frames.abort()
