"""The mock agent as a program: `python -m corral.sources.mock.agent`.

The child side of the mock's process mode. It reads `{"Script": {...}}`
then one driver command per line on stdin, plays the script with the same
player as the in-process mock, and writes driver events as JSON lines on
stdout. Writes wait on the pipe (a parent that stops reading stops this
process), and the misbehaving steps (Raw, Flood, Stderr, Exit) write to
the real pipes, so the parent's decoding and process handling are tested
for real. With `ignore_close` it ignores EOF on stdin and SIGTERM, so only
the parent's SIGKILL to its process group ends it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence

import orjson

from ...pipeline.driver import DriverEvent, LaunchSpec
from ...pipeline.framing import LineSplitter, Oversized
from ._driver import MockDriver
from ._script import parse_script
from ._wire import decode_command, encode_event

_FLOOD_CHUNK = 1024 * 1024


class _Pipes:
    """stdout through the event loop (writes wait on the pipe), stderr direct."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, event: DriverEvent) -> None:
        await self.raw(orjson.dumps(encode_event(event)) + b"\n")

    async def send_batch(self, batch: Sequence[DriverEvent]) -> None:
        await self.raw(b"".join(orjson.dumps(encode_event(event)) + b"\n" for event in batch))

    async def raw(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def flood(self, size: int) -> None:
        left = size
        while left > 0:
            await self.raw(b"x" * min(left, _FLOOD_CHUNK))
            left -= _FLOOD_CHUNK
        await self.raw(b"\n")

    async def stderr(self, text: str) -> None:
        os.write(2, text.encode("utf-8") + b"\n")

    async def exit(self, code: int) -> None:
        await self._writer.drain()
        os._exit(code)


async def _read_commands(
    reader: asyncio.StreamReader, driver: MockDriver, *, ignore_eof: bool
) -> None:
    lines = LineSplitter()
    while chunk := await reader.read(65536):
        for line in lines.feed(chunk):
            if isinstance(line, Oversized) or not line.strip():
                continue
            await driver.send(decode_command(orjson.loads(line)))
    if not ignore_eof:
        await driver.stop(0)  # EOF: the parent is done with us


async def main() -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    pipes = _Pipes(asyncio.StreamWriter(transport, protocol, None, loop))
    first = await reader.readline()
    script = parse_script(orjson.loads(first)["Script"])
    if script.ignore_close:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stuck agent: only SIGKILL stops it
    driver = MockDriver(script, LaunchSpec(session_id="child", executable="", dir="."), io=pipes)
    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(_read_commands(reader, driver, ignore_eof=script.ignore_close))
        await driver.run(pipes)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
