"""The Codex driver: one `codex app-server` process per session.

```
codex stdout ─► JsonRpcPeer.pump ─► inbox frames ─┐
                                                   ├─► run ─► AppServerNormalizer ─► events_out
request tasks (turn/start, steer...) ─► inbox local ┘
engine ─► send ─► JSON-RPC requests, replies to Codex's requests
```

The process, pump, inbox, `run` and `stop` are the kit's `JsonRpcDriver`
(`sources/_kit/driver.py`); this module is the handshake and the
translator, `_commands` the encoder. Writing (`send`) never waits for
Codex: commands that need an answer run as tasks in the session's task
group and report their verdicts as local events of the inbox, served
before Codex's next message. So the actor is never blocked on the agent,
and `run` is the only writer of `events_out`. Messages Codex queued during the handshake (config
warnings) come out first, outside any turn.

`start` launches `codex app-server [args...]` in the session directory
(with a private CODEX_HOME if asked) and does the handshake; a Codex that
exits meanwhile is `ProcessExited` with its stderr, a missing login
`AuthRequired`, a refused resume or fork `ResumeFailed`. `stop` is the kit's (no task
waits on a session that is over; the process group ends: EOF, TERM, KILL),
then removes a private CODEX_HOME; `run` then sees the end of Codex's
output and reports `AgentExited`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping

from ...pipeline.driver import DriverEvent, Handshake, LaunchSpec, TurnBegan
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import AgentInstallation, Fields, ShapeError
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, JsonRpcPeer, RpcError, RpcNotification, RpcRequest, WireProblem
from ._appserver import AppServerNormalizer
from ._catalog import details_for
from ._commands import Commands
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
        super().__init__(spec, telemetry, AppServerNormalizer(wall_clock_ns=wall_clock_ns))
        self._executable = installation.executable_path
        self._environ = dict(os.environ if environ is None else environ)
        self._client_version = client_version

    # ---- lifecycle -------------------------------------------------------------

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        self._options = launch_options(self._spec.configure)
        env = {**self._environ, **dict(self._spec.env)}
        if self._options.get("isolate_home") is True:
            self._private_home = await asyncio.to_thread(make_private_home, source_home(env))
            env["CODEX_HOME"] = str(self._private_home)
        else:
            await asyncio.to_thread(ensure_home, env)
        argv = [self._executable, "app-server", *self._spec.args]
        peer = await self._launch(tasks, argv, env)
        return await self._handshaking(self._handshake(peer))

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

    async def stop(self, grace: float) -> None:
        await super().stop(grace)
        if self._private_home is not None:
            home, self._private_home = self._private_home, None
            await asyncio.to_thread(remove_home, home)

    # ---- reading -----------------------------------------------------------------

    async def _translate(self, item: Incoming) -> list[DriverEvent]:
        match item:
            case RpcNotification(method=method, params=params):
                events = self._normalizer.notification(method, params)
                if method == "turn/started" and any(isinstance(e, TurnBegan) for e in events):
                    self._turn_began()
                return events
            case RpcRequest(id=rpc_id, method=method, params=params):
                events, reply = self._normalizer.server_request(rpc_id, method, params)
                if reply is not None:
                    await self._reply(reply)
                return events
            case WireProblem():
                return [item.event(speaker="Codex", wire="JSON-RPC", raw_key="codex/raw_line")]
