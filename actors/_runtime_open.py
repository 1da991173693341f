"""Opening a session in the Runtime: its directory, its sandbox, what a failed open raises.

Helpers of `Runtime._start` and `Runtime._run_session` (`runtime.py`): the
session directory checked before anything starts, the sandbox mode a policy
asks for, the `CorralError` an opener gets when the handshake fails, times
out or is abandoned, and what happens when the opener itself is cancelled
(a handshake in flight is stopped; a session that made it is kept, live, so
it is closed with the others).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence

import attrs

from ..pipeline.commands import PermissionMode, SessionOptions
from ..pipeline.driver import Driver, Handshake, LaunchSpec, SandboxSpec
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import AgentDetails, AgentInstallation, SandboxStatus
from ..pipeline.policy import Policy
from ..pipeline.rules import RulePolicy, SandboxMode, guarded_modes
from ..pipeline.stages import Sink
from ..sinks.transcript import Archive
from .engine import Engine, EngineSettings
from .handle import Session
from .session import SessionActor

__all__ = [
    "SessionOver",
    "abandon_open",
    "abandoned",
    "as_open_error",
    "checked_dir",
    "contain_crash",
    "engine_builder",
    "handshaken",
    "launch_of",
    "sandbox_mode",
    "session_policy",
    "session_sinks",
]


class SessionOver(Exception):
    """Raised inside a session's task group to end its leftover helpers."""


def sandbox_mode(policy: Policy | None) -> SandboxMode:
    """The policy's `sandbox` key; policies without one (modes, the app's own) mean auto."""
    return policy.spec.sandbox if isinstance(policy, RulePolicy) else SandboxMode.AUTO


async def session_policy(
    spec: SessionOptions, loader: Callable[[str], Policy] | None, fallback: Policy | None
) -> Policy:
    """The session's own policy file, else the Runtime's policy, else the guarded modes."""
    if spec.policy is not None:
        if loader is None:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION, "this runtime cannot load policy files"
            )
        return await asyncio.to_thread(loader, spec.policy)
    return fallback if fallback is not None else guarded_modes()


def session_sinks(
    session: Session,
    spec: SessionOptions,
    extra_sinks: Sequence[Sink],
    factories: Sequence[Callable[[str, str, str], Sink]],
    archive: Archive | None,
) -> Callable[[str, str], list[Sink]]:
    """(agent id, dir) -> the session's sinks; the archive learns its secrets as they are made."""

    def sinks_for(agent_id: str, session_dir: str) -> list[Sink]:
        made = [make(session.id, agent_id, session_dir) for make in factories]
        if archive is not None:  # its files (made just now) mask the secrets the app passed
            archive.learn_secrets(session.id, spec.env, spec.mcp_servers)
        return [session.app_sink, *extra_sinks, *made]

    return sinks_for


def abandoned() -> CorralError:
    return CorralError(
        ErrorKind.SESSION_CLOSED, "the session was abandoned before its handshake completed"
    )


def abandon_open(
    running: asyncio.Task[None],
    opened: asyncio.Future[SessionActor],
    session: Session,
    sessions: dict[str, Session],
) -> None:
    """The opener was cancelled: stop a handshake in flight; keep a session that made it."""
    if opened.done() and not opened.cancelled() and opened.exception() is None:
        session.attach(opened.result())
        sessions[session.id] = session  # live: closed with the others
    else:
        running.cancel()


def checked_dir(path: str) -> str:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(full):
        raise CorralError(ErrorKind.INVALID_REQUEST, f"session directory {path!r} does not exist")
    return full


def as_open_error(error: Exception, timeout: float) -> CorralError:
    if isinstance(error, CorralError):
        return error
    if isinstance(error, TimeoutError):
        return CorralError(
            ErrorKind.HANDSHAKE_TIMEOUT, f"the agent did not complete its handshake in {timeout} s"
        )
    return CorralError(ErrorKind.PROTOCOL_FAILED, f"the handshake failed: {error!r}")


def launch_of(
    spec: SessionOptions,
    session_id: str,
    executable: str,
    session_dir: str,
    mode: PermissionMode,
    tools: bool,
    sandbox: SandboxSpec | None,
) -> LaunchSpec:
    """What the session's driver starts the agent with."""
    return LaunchSpec(
        session_id=session_id,
        executable=executable,
        dir=session_dir,
        resume=spec.resume,
        fork=spec.fork,
        fork_at=spec.fork_at,
        permission_mode=mode,
        mcp_servers=spec.mcp_servers,
        configure=spec.configure,
        env=spec.env,
        args=spec.args,
        tools=tools,
        sandbox=sandbox,
    )


def engine_builder(
    launch: LaunchSpec,
    installation: AgentInstallation,
    policy: Policy,
    show_auto_decisions: bool,
    settings: EngineSettings,
    sandbox_status: SandboxStatus,
) -> Callable[[object], Engine]:
    """The session's Engine, built once the handshake is in (its details with the sandbox)."""

    def build_engine(handshake: object) -> Engine:
        assert isinstance(handshake, Handshake)
        details = attrs.evolve(handshake.details, sandbox=sandbox_status)
        handshake = attrs.evolve(handshake, details=details)
        return Engine(
            session_id=launch.session_id,
            agent=installation,
            handshake=handshake,
            clock=time.monotonic,
            wall_clock_ns=time.time_ns,
            session_dir=launch.dir,
            mode=launch.permission_mode,
            policy=policy,
            show_auto_decisions=show_auto_decisions,
            settings=settings,
        )

    return build_engine


async def handshaken(
    driver: Driver,
    tasks: asyncio.TaskGroup,
    check: Callable[[AgentDetails], None],
    opened: asyncio.Future[SessionActor],
    handshake_timeout: float,
    grace: float,
) -> Handshake:
    """The agent's handshake, checked; a failure stops the agent and tells the opener."""
    try:
        async with asyncio.timeout(handshake_timeout):
            handshake = await driver.start(tasks)
        check(handshake.details)
    except asyncio.CancelledError:
        # Abandoned mid-handshake (the opener gave up, the Runtime closes):
        # no agent outlives it, and an opener still waiting hears why.
        if not opened.done():
            opened.set_exception(abandoned())
        await driver.stop(grace)
        raise
    except Exception as error:
        await driver.stop(grace)
        opened.set_exception(as_open_error(error, handshake_timeout))
        raise SessionOver from None
    return handshake


async def contain_crash(
    group: BaseExceptionGroup[Exception],
    session: Session,
    driver: Driver,
    opened: asyncio.Future[SessionActor],
    grace: float,
) -> None:
    """A bug in corral inside one session: printed, the opener told, the session abandoned."""
    for crash in group.exceptions:
        traceback.print_exception(crash, file=sys.stderr)
    if not opened.done():
        opened.set_exception(
            CorralError(ErrorKind.PROTOCOL_FAILED, f"open failed: {group.exceptions[0]!r}")
        )
    await driver.stop(grace)
    await session.abandon(
        CorralError(
            ErrorKind.PROTOCOL_FAILED,
            f"corral failed inside this session: {group.exceptions[0]!r}",
        )
    )
