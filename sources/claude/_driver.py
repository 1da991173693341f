"""The Claude Code driver: one `claude -p` process per session, kept across turns.

```
engine ─ send(command) ─► ClaudeProtocol.send ─► bytes ─► claude stdin
                                                            │
run(events_out) ◄─ events channel ◄─ reader task ◄─ stdout ─┘
                                      (ClaudeProtocol.receive_line)
```

`start` spawns the CLI (its own process group, stderr drained into a
tail), writes `initialize` and reads until its response; the `initialize`
payload is the handshake. The reader task, in the session's task group,
then owns stdout: it feeds every line to the sans-IO protocol, writes the
replies the protocol needs, and pushes DriverEvents into a bounded channel
that `run` forwards (a full channel stops the reader, and the pipe stops the
CLI: backpressure).

The CLI may exit after an interrupt. If the process that exits had been
sent an interrupt, the reader starts a new one with `--resume <session>`
(`telemetry.process_restarted()`), re-initializes it, then ends the
interrupted turn `Cancelled`; commands wait until the new process is ready.
Any other exit is reported once as `AgentExited` with the stderr tail.

Rollback (`_rollback.py`): once the protocol has a fork ready (at once, or
after the files' rewind), the driver ends the process (EOF) and the reader,
seeing it exit, starts the fork in its place (`--resume --fork-session
--resume-session-at`, a new session id), then reports the verdict and the
new resume token. Commands wait meanwhile, as for a restart; a fork that
cannot start refuses the rollback and ends the session (`AgentExited`).

`stop` ends it all: no more restarts, the channel aborted (so `run` and the
reader return), the process group stopped with EOF, SIGTERM, SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import os
from collections.abc import Callable, Mapping, Sequence

import attrs

from ...pipeline.channels import BrokenChannel, Channel
from ...pipeline.driver import (
    AgentExited,
    DriverCommand,
    DriverEvent,
    EventSink,
    Handshake,
    LaunchSpec,
    StartTurn,
)
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import AgentDetails, AgentInstallation
from ...pipeline.framing import LineSplitter, Oversized
from ...pipeline.sizes import item_size
from ...pipeline.telemetry import SessionTelemetry
from .._kit.problems import tally
from .._private import PrivateFile
from .._process import AgentProcess, exit_status
from ._details import details_from_initialize
from ._encode import Attachment, FileAttachment, ImageAttachment
from ._launch import Launch, fork_for, launch_for, mcp_config, restart_for
from ._protocol import ClaudeProtocol, new_uuid
from ._system import oversized

__all__ = ["ClaudeDriver", "load_attachments"]

_EVENTS_CAPACITY = 64
_EVENTS_BYTES = 8 * 1024 * 1024  # 64 events of 16 MB lines would be 1 GB (one larger: alone)
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_IMAGE_LIMIT = 20 * 1024 * 1024


def load_attachments(paths: Sequence[str], base: str) -> tuple[Attachment, ...]:
    """Images go inline (base64); any other file is named for the CLI to read."""
    loaded: list[Attachment] = []
    for path in paths:
        full = os.path.join(base, os.path.expanduser(path))
        media_type, _ = mimetypes.guess_type(full)
        is_image = media_type in _IMAGE_TYPES and os.path.isfile(full)
        if is_image and os.path.getsize(full) <= _IMAGE_LIMIT:
            with open(full, "rb") as image:
                loaded.append(ImageAttachment(media_type=str(media_type), data=image.read()))
            continue
        loaded.append(FileAttachment(path=path))
    return tuple(loaded)


class ClaudeDriver:
    def __init__(
        self,
        *,
        installation: AgentInstallation,
        spec: LaunchSpec,
        telemetry: SessionTelemetry,
        environ: Mapping[str, str],
        new_id: Callable[[], str] = new_uuid,
    ) -> None:
        self._spec = spec
        self._telemetry = telemetry
        self._new_id = new_id
        # MCP servers' config (secrets) goes in a private file, written at start.
        self._mcp_file = PrivateFile("mcp.json") if spec.mcp_servers else None
        self._launch = launch_for(
            installation.executable_path,
            spec,
            environ,
            new_id,
            mcp_config_path=None if self._mcp_file is None else self._mcp_file.path,
        )
        self._protocol = ClaudeProtocol(
            new_id=new_id,
            resume_token=self._launch.session_id,
            model=self._launch.model,
            mode=self._launch.mode,
            effort=self._launch.effort,
            fresh=spec.resume is None and spec.fork is None,
        )
        self._events: Channel[DriverEvent] = Channel(
            _EVENTS_CAPACITY,
            name=f"{spec.session_id}/claude",
            max_bytes=_EVENTS_BYTES,
            size=item_size,
        )
        self._process: AgentProcess | None = None
        self._lines = LineSplitter()
        self._tasks: asyncio.TaskGroup | None = None
        self._ready = asyncio.Event()
        self._stopping = False
        self._early: list[DriverEvent] = []

    # ---- lifecycle -----------------------------------------------------------------

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        self._tasks = tasks
        try:
            if self._mcp_file is not None:
                self._mcp_file.write(mcp_config(self._spec.mcp_servers))
            details = await self._boot(self._launch)
        except BaseException:
            self._forget_mcp_file()  # `stop` may never come (a cancelled open)
            raise
        tasks.create_task(self._read_loop(), name=f"{self._spec.session_id}-claude-reader")
        return Handshake(
            details=details,
            resume_token=self._launch.session_id,
            options=(
                ("model", self._protocol.model),
                ("mode", self._protocol.mode),
                ("effort", self._protocol.effort),
            ),
        )

    async def stop(self, grace: float) -> None:
        self._stopping = True
        self._ready.set()  # nothing waits for a process that will not come
        self._events.abort()
        try:
            if self._process is not None:
                await self._process.stop(grace)
        finally:
            self._forget_mcp_file()

    def _forget_mcp_file(self) -> None:
        if self._mcp_file is not None:
            self._mcp_file.remove()

    async def run(self, events_out: EventSink) -> None:
        async for batch in self._events.batches():
            await events_out.send_batch(batch)

    async def send(self, command: DriverCommand) -> None:
        await self._ready.wait()
        if self._stopping:
            return
        attachments: tuple[Attachment, ...] = ()
        if isinstance(command, StartTurn) and command.attachments:
            attachments = await asyncio.to_thread(
                load_attachments, command.attachments, self._spec.dir
            )
        data, events = self._protocol.send(command, attachments)
        try:
            for event in events:
                await self._forward(event)
        except BrokenChannel:
            return
        await self._write(data)
        await self._fork_if_ready()

    # ---- the process ---------------------------------------------------------------

    async def _boot(self, launch: Launch) -> AgentDetails:
        """Spawn the CLI and complete `initialize`; raise CorralError if it cannot."""
        assert self._tasks is not None
        self._lines = LineSplitter()
        process = await AgentProcess.spawn(
            launch.argv,
            cwd=self._spec.dir,
            env=launch.env,
            tasks=self._tasks,
            telemetry=self._telemetry,
            sandbox=self._spec.sandbox,
        )
        self._process = process
        if self._stopping:
            await process.stop(0.5)
            raise CorralError(ErrorKind.SESSION_CLOSED, "the session closed while Claude started")
        await self._write(self._protocol.initialize())
        protocol = self._protocol
        while protocol.initialized is None and protocol.init_failure is None:
            chunk = await process.read()
            if not chunk:
                raise self._boot_failure(await process.wait(), process)
            self._early.extend(self._receive(chunk))
            await self._write(protocol.data_to_send())
        if protocol.init_failure is not None:
            raise CorralError(
                ErrorKind.PROTOCOL_FAILED, f"Claude Code refused to start: {protocol.init_failure}"
            )
        self._ready.set()
        assert protocol.initialized is not None
        return details_from_initialize(
            protocol.initialized, protocol.model, protocol.mode, protocol.effort
        )

    def _boot_failure(self, status: str, process: AgentProcess) -> CorralError:
        stderr = process.stderr_tail()
        said = "\n".join([*self._protocol.startup_errors, stderr]).strip()
        if "No conversation found" in said:
            return CorralError(ErrorKind.RESUME_FAILED, f"Claude Code cannot resume: {said}")
        return CorralError(
            ErrorKind.PROCESS_EXITED,
            f"Claude Code exited before its handshake (status {status})",
            status=status,
            stderr=stderr,
        )

    async def _read_loop(self) -> None:
        try:
            while True:
                early, self._early = self._early, []
                for event in early:
                    await self._forward(event)
                await self._pump()
                if not await self._after_exit():
                    return
        except BrokenChannel:
            return  # the session stopped listening
        finally:
            self._events.close()

    async def _pump(self) -> None:
        process = self._process
        assert process is not None
        while chunk := await process.read():
            await self._forward_batch(self._receive(chunk))
            await self._write(self._protocol.data_to_send())
            await self._fork_if_ready()
        for line in self._lines.end():
            for event in self._line(line):
                await self._forward(event)

    async def _after_exit(self) -> bool:
        """The CLI's output ended: restart it (True) or report the exit (False)."""
        process = self._process
        assert process is not None
        status = await process.wait()
        if self._stopping:
            return False
        if self._protocol.fork is not None:
            return await self._fork(process)
        if not self._protocol.interrupted:
            await self._forward(AgentExited(status=status, stderr=process.stderr_tail()))
            return False
        self._ready.clear()
        lost = self._protocol.process_lost()
        token = self._protocol.resume_token or self._launch.session_id
        protocol = self._protocol
        launch = restart_for(
            self._launch, self._spec, token, protocol.model, protocol.mode, protocol.effort
        )
        self._telemetry.process_restarted()
        try:
            await self._boot(launch)
        except CorralError as error:
            self._ready.set()
            for event in lost:
                await self._forward(event)
            failed = self._process or process
            stderr = "\n".join(filter(None, [error.message, failed.stderr_tail()]))
            status = exit_status(failed.returncode)
            await self._forward(AgentExited(status=status, stderr=stderr))
            return False
        for event in lost:
            await self._forward(event)
        return True

    async def _fork_if_ready(self) -> None:
        """A rollback is ready: end this process; the reader starts the fork."""
        process = self._process
        if self._protocol.fork is None or process is None or process.returncode is not None:
            return
        self._ready.clear()
        process.close_stdin()  # the CLI exits at EOF; `stop` would wait here for it

    async def _fork(self, process: AgentProcess) -> bool:
        protocol = self._protocol
        point = protocol.fork
        assert point is not None
        lost = protocol.process_lost()
        token = protocol.resume_token or self._launch.session_id
        current = attrs.evolve(
            self._launch, model=protocol.model, mode=protocol.mode, effort=protocol.effort
        )
        launch = fork_for(current, self._spec, token, self._new_id(), point.at)
        self._telemetry.process_restarted()
        try:
            await self._boot(launch)
        except CorralError as error:
            self._ready.set()
            for event in [*lost, *protocol.fork_failed(error.message)]:
                await self._forward(event)
            failed = self._process or process
            stderr = "\n".join(filter(None, [error.message, failed.stderr_tail()]))
            await self._forward(AgentExited(status=exit_status(failed.returncode), stderr=stderr))
            return False
        self._launch = launch
        for event in [*lost, *protocol.forked(point, launch.session_id)]:
            await self._forward(event)
        return True

    # ---- lines in and out ------------------------------------------------------------

    def _receive(self, chunk: bytes) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for line in self._lines.feed(chunk):
            events.extend(self._line(line))
        return events

    def _line(self, line: bytes | Oversized) -> list[DriverEvent]:
        if isinstance(line, Oversized):
            return [oversized(line)]
        if self._telemetry.records_wire:
            self._telemetry.wire_line("in", line)
        return self._protocol.receive_line(line)

    async def _forward(self, event: DriverEvent) -> None:
        await self._forward_batch((event,))

    async def _forward_batch(self, events: Sequence[DriverEvent]) -> None:
        """A read's events, as one batch."""
        for event in events:
            tally(self._telemetry, event)
        await self._events.send_batch(events)

    async def _write(self, data: bytes) -> None:
        process = self._process
        if not data or process is None:
            return
        if self._telemetry.records_wire:
            for line in data.split(b"\n"):
                if line:
                    self._telemetry.wire_line("out", line)
        with contextlib.suppress(AgentGone):  # the reader reports the exit
            await process.write(data)
