"""corral's own stdin and stdout as async byte streams, whatever they are.

An app may hand `corral serve` a pipe, a socket, a terminal, a regular file
or `/dev/null`. What matters is not the file's type but whether the kernel
can poll it: epoll refuses regular files and some character devices
(`/dev/null` is one; registering it aborts uvloop). So the question is put
to epoll itself, once per stream (without epoll, the file's type decides):

- pollable (pipes, sockets, terminals): stdin is read when the loop says it
  is readable, one `os.read` of what is there; stdout goes through the
  loop's pipe transport (`drain` is the backpressure), a socket through
  `sock_sendall`, a terminal through a worker thread.
- not pollable (files, `/dev/null`): reads and writes never wait on a peer,
  so they run in a worker thread and return at once (`/dev/null` reads EOF).

Reading happens only when `read()` is awaited: a caller that stops asking
leaves the bytes in the kernel's buffer, and the app blocks on its write.
Writes to an app that has gone away raise `BrokenPipeError`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import select
import socket
import stat
import sys
from typing import BinaryIO

__all__ = ["StdinReader", "StdoutStream", "open_stdio", "pollable"]

_CHUNK = 256 * 1024


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd` (epoll's own answer)."""
    if not hasattr(select, "epoll"):  # not Linux: go by the file's type
        mode = os.fstat(fd).st_mode
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
    poller = select.epoll()
    try:
        poller.register(fd, select.EPOLLIN)
    except PermissionError:  # EPERM: regular files, /dev/null and the like
        return False
    finally:
        poller.close()
    return True


class StdinReader:
    def __init__(self, fd: int, *, polled: bool) -> None:
        self._fd = fd
        self._polled = polled

    async def read(self) -> bytes:
        """The next chunk; b"" at EOF."""
        if not self._polled:
            return await asyncio.to_thread(_read, self._fd)
        loop = asyncio.get_running_loop()
        while True:
            ready: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self._fd, _resolve, ready)
            try:
                await ready
            finally:
                loop.remove_reader(self._fd)
            try:
                return _read(self._fd)
            except BlockingIOError:
                # A non-blocking file (stdin may share its file with stdout, which
                # the write transport makes non-blocking) already drained by someone.
                continue


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError as error:
        if error.errno in (errno.EIO, errno.ECONNRESET):  # a hung-up terminal, a reset socket
            return b""
        raise


def _resolve(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


class StdoutStream:
    """One of three ways out: the loop's pipe transport, a socket, or a thread."""

    def __init__(
        self,
        writer: asyncio.StreamWriter | None,
        file: BinaryIO,
        sock: socket.socket | None = None,
    ) -> None:
        self._writer = writer
        self._file = file
        self._sock = sock

    async def write(self, data: bytes) -> None:
        try:
            if self._writer is not None:
                if self._writer.transport.is_closing():
                    # The app's end went away; uvloop refuses writes to a closed pipe.
                    raise BrokenPipeError("the app closed its end of stdout")
                self._writer.write(data)
                await self._writer.drain()
            elif self._sock is not None:
                await asyncio.get_running_loop().sock_sendall(self._sock, data)
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
    in_file = stdin if stdin is not None else sys.stdin.buffer
    out_file = stdout if stdout is not None else sys.stdout.buffer
    return StdinReader(in_file.fileno(), polled=pollable(in_file.fileno())), await _stdout(out_file)


async def _stdout(out_file: BinaryIO) -> StdoutStream:
    fd = out_file.fileno()
    if stat.S_ISSOCK(os.fstat(fd).st_mode):
        # Not a pipe transport: it takes a readable fd for a closed reader, and a
        # socket that is stdin too is readable whenever the app sends a command.
        sock = socket.socket(fileno=os.dup(fd))
        sock.setblocking(False)
        return StdoutStream(None, out_file, sock)
    # A terminal is written from a thread: it is fast, and uvloop's write transport
    # on a terminal stops the loop from ever seeing stdin (the same terminal) readable.
    if not pollable(fd) or os.isatty(fd):
        return StdoutStream(None, out_file)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out_file)
    return StdoutStream(asyncio.StreamWriter(transport, protocol, None, loop), out_file)
