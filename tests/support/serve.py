"""`corral serve` as a real subprocess, for tests of the line protocol.

Every line the process writes is parsed and checked against the schema's
`Line` as it is read. Replies are matched by id; events are kept per
session in arrival order. Waits are bounded and wait on a condition, never
on a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from .schema import check_line

__all__ = ["ServeProcess"]

Line = dict[str, Any]


class ServeProcess:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[Line] = []
        self._arrived = asyncio.Condition()
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._reading = asyncio.Event()  # cleared: the app stops reading (backpressure)
        self._reading.set()
        self.stderr = b""

    @classmethod
    async def start(
        cls,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        command: Sequence[str] = ("-m", "corral.actors.cli", "serve"),
        launcher: Sequence[str] = (),
    ) -> ServeProcess:
        """`command`: what python runs (another module that serves the protocol);
        `launcher`: what runs python (`nsenter ...` into a Ray test cluster's namespace)."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        process = await asyncio.create_subprocess_exec(
            *launcher,
            sys.executable,
            *command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            cwd=cwd,
            limit=256 * 1024 * 1024,
        )
        serve = cls(process)
        serve._reader = asyncio.create_task(serve._read())
        return serve

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while await self._reading.wait() and (raw := await self.process.stdout.readline()):
            line = orjson.loads(raw)
            check_line(line)
            async with self._arrived:
                self.lines.append(line)
                self._arrived.notify_all()
        async with self._arrived:
            self._arrived.notify_all()

    def pause_reading(self) -> None:
        """Stop reading corral's stdout, as a stalled app would: its pipe fills up.

        The pipe's transport stops too: the stream reader would otherwise go on
        buffering (its limit is 256 MiB here) what nobody reads.
        """
        self._reading.clear()
        self._stdout_transport().pause_reading()

    def resume_reading(self) -> None:
        self._stdout_transport().resume_reading()
        self._reading.set()

    def _stdout_transport(self) -> asyncio.ReadTransport:
        transport = self.process._transport.get_pipe_transport(1)  # type: ignore[attr-defined]
        assert isinstance(transport, asyncio.ReadTransport)
        return transport

    async def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, command: dict[str, Any]) -> int:
        """Send a command; returns its id (assigned when missing)."""
        if "id" not in command:
            self._next_id += 1
            command = {"id": 1000 + self._next_id, **command}
        await self.send_raw(json.dumps(command).encode() + b"\n")
        return int(command["id"])

    async def wait_for(
        self, predicate: Callable[[Line], bool], timeout: float = 30.0, after: int = 0
    ) -> Line:
        """The first line (from index `after`) satisfying `predicate`.

        Each line is shown to `predicate` once, in order, so a predicate may
        keep state (count what it has seen).
        """
        async with asyncio.timeout(timeout):
            async with self._arrived:
                while True:
                    for line in self.lines[after:]:
                        if predicate(line):
                            return line
                    after = max(after, len(self.lines))
                    if self._reader is not None and self._reader.done():
                        raise AssertionError(
                            f"corral exited before the expected line; last: {self.lines[-3:]}"
                        )
                    await self._arrived.wait()

    async def request(self, command: dict[str, Any], timeout: float = 30.0) -> Line:
        """Send and return the reply line (`ok` or `error`)."""
        return await self.reply(await self.send(command), timeout)

    async def reply(self, frame_id: int, timeout: float = 30.0) -> Line:
        """The reply line (`ok` or `error`) to the frame sent with `frame_id`."""
        return await self.wait_for(
            lambda line: line.get("id") == frame_id and ("ok" in line or "error" in line),
            timeout,
        )

    async def ok(self, command: dict[str, Any], timeout: float = 30.0) -> Any:
        reply = await self.request(command, timeout)
        assert "ok" in reply, f"expected ok, got {reply}"
        return reply["ok"]

    def events(self, session: str) -> list[Line]:
        return [
            line["event"]
            for line in self.lines
            if "event" in line and line["event"]["session_id"] == session
        ]

    def kinds(self, session: str) -> list[str]:
        """Event kinds of a session as names (`TextDelta`, `ContextCompacted`...)."""
        out = []
        for event in self.events(session):
            kind = event["kind"]
            out.append(kind if isinstance(kind, str) else next(iter(kind)))
        return out

    async def wait_event(
        self, session: str | None, kind: str, timeout: float = 30.0, count: int = 1
    ) -> Line:
        """The `count`-th event of `kind` in `session` (None: in any session)."""
        seen = 0

        def match(line: Line) -> bool:
            nonlocal seen
            event = line.get("event")
            if event is None or session not in (None, event["session_id"]):
                return False
            name = event["kind"] if isinstance(event["kind"], str) else next(iter(event["kind"]))
            if name == kind:
                seen += 1
                return seen == count
            return False

        line = await self.wait_for(match, timeout)
        return line["event"]  # type: ignore[no-any-return]

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    async def finish(self, timeout: float = 30.0) -> int:
        """Close stdin and wait for a clean exit; returns the exit code."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        async with asyncio.timeout(timeout):
            if self._reader is not None:
                await self._reader
            assert self.process.stderr is not None
            self.stderr = await self.process.stderr.read()
            return await self.process.wait()

    async def kill(self) -> None:
        if not self._reading.is_set():
            self.resume_reading()  # a paused pipe never reaches EOF: `wait` would hang
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()


def mock_args(script_path: str, extra: Sequence[str] = ()) -> list[str]:
    return ["--mock", script_path, *extra]
