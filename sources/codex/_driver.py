"""The Codex driver: one `codex app-server` process per session.

```
codex stdout ─► JsonRpcPeer.pump ─► incoming ─┐
                                               ├─► run ─► AppServerNormalizer ─► events_out
request tasks (turn/start, steer...) ─► verdicts ┘
engine ─► send ─► JSON-RPC requests, replies to Codex's requests
```

Writing (`send`, in `_commands`) never waits for Codex: commands that
need an answer run as tasks in the session's task group and report through
the bounded `verdicts` channel, which `run` merges with Codex's own
messages. So the actor is never blocked on the agent, and `run` is the only
writer of `events_out`. Messages Codex queued during the handshake (config
warnings) come out first, outside any turn.

`start` launches `codex app-server [args...]` in the session directory
(with a private CODEX_HOME if asked) and does the handshake; a Codex that
exits meanwhile is `ProcessExited` with its stderr, a missing login
`AuthRequired`, a refused resume or fork `ResumeFailed`. `stop` aborts
the verdicts (no task waits on a session that is over), ends the process
group (EOF, TERM, KILL) and removes a private CODEX_HOME; `run` then sees
the end of Codex's output and reports `AgentExited`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping

from ...pipeline.channels import Channel, EndOfChannel
from ...pipeline.driver import (
    AgentExited,
    DriverEvent,
    Emitted,
    EventSink,
    Handshake,
    LaunchSpec,
    TurnBegan,
)
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    DiagnosticLevel,
    Fields,
    ShapeError,
)
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, JsonRpcPeer, RpcError, RpcNotification, RpcRequest, WireNoise
from .._process import AgentProcess
from ._appserver import AppServerNormalizer
from ._catalog import details_for
from ._commands import Commands
from ._common import diagnostic
from ._handshake import introduce, shape_failure
from ._home import ensure_home, make_private_home, remove_home, source_home
from ._launch import launch_options, thread_request

__all__ = ["CodexDriver"]


class CodexDriver(Commands):
    def __init__(
        self,
        installation: AgentInstallation,
        spec: LaunchSpec,
        telemetry: SessionTelemetry,
        *,
        environ: Mapping[str, str] | None = None,
        wall_clock_ns: Callable[[], int] = time.time_ns,
        client_version: str = "0.1.0",
    ) -> None:
        super().__init__(spec, AppServerNormalizer(wall_clock_ns=wall_clock_ns))
        self._executable = installation.executable_path
        self._telemetry = telemetry
        self._environ = dict(os.environ if environ is None else environ)
        self._client_version = client_version
        self._incoming: Channel[Incoming] = Channel(256, name=f"{spec.session_id}/codex")

    # ---- lifecycle -------------------------------------------------------------

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        self._tasks = tasks
        self._options = launch_options(self._spec.configure)
        env = {**self._environ, **dict(self._spec.env)}
        if self._options.get("isolate_home") is True:
            self._private_home = await asyncio.to_thread(make_private_home, source_home(env))
            env["CODEX_HOME"] = str(self._private_home)
        else:
            await asyncio.to_thread(ensure_home, env)
        argv = [self._executable, "app-server", *self._spec.args]
        self._process = await AgentProcess.spawn(
            argv,
            cwd=self._spec.dir,
            env=env,
            tasks=tasks,
            telemetry=self._telemetry,
            sandbox=self._spec.sandbox,
        )
        self._peer = JsonRpcPeer(self._process, telemetry=self._telemetry)
        tasks.create_task(self._peer.pump(self._incoming), name=f"{self._spec.session_id}-pump")
        try:
            return await self._handshake(self._peer)
        except AgentGone:
            raise await self._exit_error() from None

    async def _handshake(self, peer: JsonRpcPeer) -> Handshake:
        try:
            intro = await introduce(peer, client_version=self._client_version)
        except RpcError as error:
            raise CorralError(
                ErrorKind.PROTOCOL_FAILED, f"Codex refused the handshake: {error.message}"
            ) from None
        except ShapeError as error:
            raise shape_failure(error, "the handshake") from None
        if intro.requires_login:
            raise CorralError(ErrorKind.AUTH_REQUIRED, "Codex is not logged in: run `codex login`")
        self._models = intro.models
        method, params = thread_request(self._spec, self._options)
        try:
            opened = Fields(await peer.request(method, params), method)
            thread = opened.obj("thread")
            self._thread_id = thread.string("id")
            title = thread.opt_string("name")
            self._options["model"] = opened.string("model")
            effort = opened.opt_string("reasoningEffort") or self._default_effort()
        except RpcError as error:
            kind = (
                ErrorKind.PROTOCOL_FAILED if method == "thread/start" else ErrorKind.RESUME_FAILED
            )
            raise CorralError(kind, f"Codex refused {method}: {error.message}") from None
        except ShapeError as error:
            raise shape_failure(error, method) from None
        if effort is not None:
            self._options["effort"] = effort
        self._normalizer.thread_id = self._thread_id
        self._normalizer.model = str(self._options["model"])
        details = details_for(
            version=intro.version, auth=intro.auth, config_options=self._config_options()
        )
        return Handshake(
            details=details,
            resume_token=self._thread_id,
            title=title,
            options=tuple(self._options.items()),
        )

    def _default_effort(self) -> str | None:
        model = self._options.get("model")
        return next((m.default_effort for m in self._models if m.id == model), None)

    async def _exit_error(self) -> CorralError:
        process = self._process
        assert process is not None
        try:
            async with asyncio.timeout(5.0):
                status = await process.wait()
        except TimeoutError:
            status = "unknown"
        tail = process.stderr_tail()
        return CorralError(
            ErrorKind.PROCESS_EXITED,
            f"Codex exited during the handshake (status {status})",
            status=status,
            stderr=tail,
        )

    async def stop(self, grace: float) -> None:
        self._verdicts.abort()
        if self._process is not None:
            await self._process.stop(grace)
        if self._private_home is not None:
            home, self._private_home = self._private_home, None
            await asyncio.to_thread(remove_home, home)

    # ---- reading -----------------------------------------------------------------

    async def run(self, events_out: EventSink) -> None:
        try:
            while (item := await self._next()) is not None:
                for event in await self._translate(item):
                    await events_out.send(event)
        finally:
            self._verdicts.abort()  # request tasks still reporting give up
        process = self._process
        assert process is not None
        status = await process.wait()
        await events_out.send(AgentExited(status=status, stderr=process.stderr_tail()))

    async def _next(self) -> Incoming | DriverEvent | None:
        """The next verdict or Codex message; None once Codex's output ended."""
        while True:
            try:
                verdict = self._verdicts.try_receive()
            except EndOfChannel:
                verdict = None
            if verdict is not None:
                return verdict
            try:
                message = self._incoming.try_receive()
            except EndOfChannel:
                return None
            if message is not None:
                return message
            await _first(self._incoming.wait_readable(), self._verdicts.wait_readable())

    async def _translate(self, item: Incoming | DriverEvent) -> list[DriverEvent]:
        match item:
            case RpcNotification(method=method, params=params):
                events = self._normalizer.notification(method, params)
                if method == "turn/started" and any(isinstance(e, TurnBegan) for e in events):
                    self._turn_began()
            case RpcRequest(id=rpc_id, method=method, params=params):
                events, reply = self._normalizer.server_request(rpc_id, method, params)
                if reply is not None:
                    await self._reply(reply)
            case WireNoise(reason=reason, raw=raw):
                kind = "oversized" if "too long" in reason else "not_json"
                message = f"Codex wrote a line that is not JSON-RPC: {reason}"
                extensions = {"corral/decode_error": kind, "codex/raw_line": raw}
                events = [diagnostic(DiagnosticLevel.WARNING, message, **extensions)]
            case _:
                return [item]
        self._count(events)
        return events

    def _count(self, events: list[DriverEvent]) -> None:
        for event in events:
            if isinstance(event, Emitted):
                if "corral/unknown_frame" in event.extensions:
                    self._telemetry.unknown_frame()
                elif event.extensions.get("corral/decode_error") == "bad_shape":
                    self._telemetry.decode_error("bad_shape")


async def _first(*waits: Awaitable[None]) -> None:
    """Wait until any of `waits` is done; cancel the rest."""
    futures = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in futures:
            future.cancel()
