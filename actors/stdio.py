"""corral's own stdin and stdout as async byte streams.

Pipes, sockets and terminals go through the event loop; a regular file
(redirected input or output) through a worker thread, since the loop cannot
poll files. Writes to an app that has gone away raise `BrokenPipeError`.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import BinaryIO

__all__ = ["StdinReader", "StdoutStream", "open_stdio"]

_CHUNK = 256 * 1024


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class StdinReader:
    def __init__(self, reader: asyncio.StreamReader | None, file: BinaryIO) -> None:
        self._reader = reader
        self._file = file

    async def read(self) -> bytes:
        """The next chunk; b"" at EOF."""
        if self._reader is not None:
            return await self._reader.read(_CHUNK)
        return await asyncio.to_thread(os.read, self._file.fileno(), _CHUNK)


class StdoutStream:
    def __init__(self, writer: asyncio.StreamWriter | None, file: BinaryIO) -> None:
        self._writer = writer
        self._file = file

    async def write(self, data: bytes) -> None:
        try:
            if self._writer is not None:
                if self._writer.transport.is_closing():
                    # The app's end went away; uvloop refuses writes to a closed pipe.
                    raise BrokenPipeError("the app closed its end of stdout")
                self._writer.write(data)
                await self._writer.drain()
            else:
                await asyncio.to_thread(self._write_file, data)
        except (BrokenPipeError, ConnectionResetError) as error:
            raise BrokenPipeError(str(error)) from None

    def _write_file(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()


async def open_stdio(
    stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> tuple[StdinReader, StdoutStream]:
    loop = asyncio.get_running_loop()
    in_file = stdin if stdin is not None else sys.stdin.buffer
    out_file = stdout if stdout is not None else sys.stdout.buffer
    reader: asyncio.StreamReader | None = None
    if _pollable(in_file.fileno()):
        reader = asyncio.StreamReader(limit=_CHUNK)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
    writer: asyncio.StreamWriter | None = None
    if _pollable(out_file.fileno()):
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, out_file
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return StdinReader(reader, in_file), StdoutStream(writer, out_file)
