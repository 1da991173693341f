"""CodexDriver against a fake `codex app-server` subprocess (exact timing, every path).

The fake (`tests/fixtures/codex/fake_app_server.py`) logs every line the
driver writes, so the tests check both what the driver reports and what it
sent, in which order. The real Codex is exercised in tests/e2e/test_codex.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from corral.pipeline.channels import Channel
from corral.pipeline.commands import RollbackScope
from corral.pipeline.driver import (
    AgentExited,
    Compact,
    ConfigApplied,
    Configure,
    DriverEvent,
    Emitted,
    Handshake,
    InfoChanged,
    Interrupt,
    LaunchSpec,
    RequestAsked,
    Respond,
    Rollback,
    RollbackVerdict,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentInstallation,
    Cancelled,
    Completed,
    Diagnostic,
    Failed,
    InstallationSource,
    PermissionAnswer,
    PermissionChoice,
)
from corral.pipeline.telemetry import NULL_TELEMETRY
from corral.sources.codex import CodexDriver

from tests.unit.codex.protocol import check_params

FAKE = Path(__file__).resolve().parents[2] / "fixtures" / "codex" / "fake_app_server.py"
TIMEOUT = 30.0


class Harness:
    def __init__(self, driver: CodexDriver, log: Path, handshake: Handshake) -> None:
        self.driver = driver
        self.log_path = log
        self.handshake = handshake
        self.events: list[DriverEvent] = []
        self._changed = asyncio.Condition()

    async def collect(self, events_in: Channel[DriverEvent]) -> None:
        async for event in events_in:
            async with self._changed:
                self.events.append(event)
                self._changed.notify_all()

    async def until(self, found: Callable[[DriverEvent], bool]) -> DriverEvent:
        async with asyncio.timeout(TIMEOUT), self._changed:
            while True:
                for event in self.events:
                    if found(event):
                        return event
                await self._changed.wait()

    async def count(self, kind: type[Any], n: int) -> list[Any]:
        async with asyncio.timeout(TIMEOUT), self._changed:
            while len(found := [e for e in self.events if isinstance(e, kind)]) < n:
                await self._changed.wait()
        return found

    def sent(self) -> list[dict[str, Any]]:
        lines = self.log_path.read_text().splitlines() if self.log_path.exists() else []
        return [json.loads(line) for line in lines]

    def methods(self) -> list[str | None]:
        return [m.get("method") for m in self.sent() if "method" in m]


def _spec(tmp_path: Path, mode: str, **fields: Any) -> LaunchSpec:
    env = (("FAKE_CODEX_MODE", mode), ("FAKE_CODEX_LOG", str(tmp_path / "sent.jsonl")))
    env += tuple(fields.pop("env", ()))
    return LaunchSpec(
        session_id="s1", executable=str(_wrapper(tmp_path)), dir=str(tmp_path), env=env, **fields
    )


def _wrapper(tmp_path: Path) -> Path:
    script = tmp_path / "codex"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    script.chmod(0o755)
    return script


def _driver(spec: LaunchSpec) -> CodexDriver:
    installation = AgentInstallation(
        id="codex", name="Codex", executable_path=spec.executable, source=InstallationSource.PINNED
    )
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": spec.dir}
    return CodexDriver(installation, spec, NULL_TELEMETRY, environ=environ)


@contextlib.asynccontextmanager
async def _session(tmp_path: Path, mode: str = "normal", **fields: Any) -> AsyncIterator[Harness]:
    """A running driver over the fake; every step, teardown included, is time-bounded.

    Teardown stops the driver, waits for `run` to end (after `AgentExited`)
    and closes the event channel so the collector ends too.
    """
    spec = _spec(tmp_path, mode, **fields)
    driver = _driver(spec)
    events: Channel[DriverEvent] = Channel(1000, name="test")
    async with asyncio.timeout(TIMEOUT * 2), asyncio.TaskGroup() as tasks:
        handshake = await driver.start(tasks)
        harness = Harness(driver, tmp_path / "sent.jsonl", handshake)
        running = tasks.create_task(driver.run(events))
        tasks.create_task(harness.collect(events))
        try:
            yield harness
        finally:
            await driver.stop(5.0)
            await running
            events.close()


async def _open_error(tmp_path: Path, mode: str = "normal", **fields: Any) -> CorralError:
    """The error `start` raises; the driver is stopped afterwards, as the runtime does."""
    driver = _driver(_spec(tmp_path, mode, **fields))
    async with asyncio.timeout(TIMEOUT), asyncio.TaskGroup() as tasks:
        try:
            await driver.start(tasks)
        except CorralError as error:
            await driver.stop(5.0)
            return error
    raise AssertionError("the session opened")


def _start(text: str, turn: str = "t1") -> StartTurn:
    return StartTurn(turn_id=turn, prompt_id="p1", text=text)


async def test_handshake_reports_version_options_and_thread(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        handshake = codex.handshake
        assert handshake.details.version == "9.9.9"
        assert handshake.resume_token == "th-1"
        assert dict(handshake.options) == {
            "sandbox": "workspace-write",
            "isolate_home": False,
            "model": "m1",
            "effort": "low",
        }
        thread_start = next(m for m in codex.sent() if m.get("method") == "thread/start")
        assert thread_start["params"]["approvalPolicy"] == "untrusted"
        assert codex.methods()[:5] == [
            "initialize",
            "initialized",
            "account/read",
            "model/list",
            "thread/start",
        ]


async def test_initialize_names_corral_and_opts_into_the_experimental_api(
    tmp_path: Path,
) -> None:
    async with _session(tmp_path) as codex:
        initialize = next(m for m in codex.sent() if m.get("method") == "initialize")
    check_params("InitializeParams", initialize["params"])
    assert initialize["params"] == {
        "clientInfo": {"name": "corral", "title": "corral", "version": "0.1.0"},
        # thread/settings/update (live model and effort) is experimental
        "capabilities": {"experimentalApi": True},
    }


async def test_a_turn_begins_and_finishes(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("hello"))
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Completed()
        assert TurnBegan() in codex.events


async def test_an_early_steer_is_held_until_the_turn_is_named(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("HANG"))
        await codex.driver.send(SteerTurn(turn_id="t1", prompt_id="p2", text="more"))
        verdict = await codex.until(lambda e: isinstance(e, SteerVerdict))
        assert verdict == SteerVerdict(prompt_id="p2", accepted=True)
        steer = next(m for m in codex.sent() if m.get("method") == "turn/steer")
        assert steer["params"]["expectedTurnId"] == "t1"
        started = codex.events.index(TurnBegan())
        assert started < codex.events.index(verdict)


async def test_a_steer_held_for_a_turn_codex_refused_is_rejected(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("REFUSE"))
        await codex.driver.send(SteerTurn(turn_id="t1", prompt_id="p2", text="more"))
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Failed("turn refused")
        verdict = await codex.until(lambda e: isinstance(e, SteerVerdict))
        assert isinstance(verdict, SteerVerdict) and not verdict.accepted
        assert codex.events.index(verdict) < codex.events.index(finished)
        assert "turn/steer" not in codex.methods()


async def test_a_steer_with_no_turn_is_refused(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(SteerTurn(turn_id="t1", prompt_id="p2", text="late"))
        verdict = await codex.until(lambda e: isinstance(e, SteerVerdict))
        assert isinstance(verdict, SteerVerdict) and not verdict.accepted


async def test_interrupt_answers_open_approvals_with_cancel_first(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("ASK"))
        asked = await codex.until(lambda e: isinstance(e, RequestAsked))
        assert isinstance(asked, RequestAsked) and asked.request.id == "codex-1"
        await codex.driver.send(Interrupt("t1"))
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Cancelled()
        replies = [m for m in codex.sent() if "result" in m]
        assert replies[-1] == {"jsonrpc": "2.0", "id": 1, "result": {"decision": "cancel"}}
        sent = codex.sent()
        assert sent.index(replies[-1]) < next(
            i for i, m in enumerate(sent) if m.get("method") == "turn/interrupt"
        )


async def test_an_answer_goes_back_under_codexs_own_request_id(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        # Codex's request id 1 is also the id of our `initialize`: replies match by direction.
        await codex.driver.send(_start("ASK"))
        asked = await codex.until(lambda e: isinstance(e, RequestAsked))
        assert isinstance(asked, RequestAsked)
        answer = PermissionAnswer(PermissionChoice.ALLOW_ONCE)
        await codex.driver.send(Respond(request_id=asked.request.id, answer=answer))
        await codex.until(lambda e: isinstance(e, TurnFinished))
        assert {"jsonrpc": "2.0", "id": 1, "result": {"decision": "accept"}} in codex.sent()


async def test_an_interrupt_before_the_turn_is_named_waits_for_it(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("HANG"))
        await codex.driver.send(Interrupt("t1"))  # Codex has not said turn/started yet
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Cancelled()
        interrupt = next(m for m in codex.sent() if m.get("method") == "turn/interrupt")
        assert interrupt["params"] == {"threadId": "th-1", "turnId": "t1"}


async def test_a_start_folded_into_a_running_turn_is_acknowledged(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("HANG"))
        await codex.until(lambda e: e == TurnBegan())
        await codex.driver.send(_start("folded", turn="t2"))
        began = await codex.count(TurnBegan, 2)
        assert len(began) == 2
        assert codex.methods().count("turn/start") == 2


async def test_compact_is_a_turn(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(Compact())
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Completed()
        assert any(isinstance(e, Emitted) and e.kind == _compacted() for e in codex.events)


def _compacted() -> object:
    from corral.pipeline.events import ContextCompacted

    return ContextCompacted()


async def test_configure_effort_uses_thread_settings(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(Configure(option="effort", value="high"))
        applied = await codex.until(lambda e: isinstance(e, ConfigApplied))
        assert applied == ConfigApplied(option="effort", value="high")
        update = next(m for m in codex.sent() if m.get("method") == "thread/settings/update")
        assert update["params"] == {"threadId": "th-1", "effort": "high"}


async def test_configure_model_refreshes_the_options(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(Configure(option="model", value="m1"))
        await codex.until(lambda e: isinstance(e, ConfigApplied))
        assert any(isinstance(e, InfoChanged) and e.config_options for e in codex.events)


async def test_rollback_reverts_to_before_the_nth_latest_turn(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        for n in (1, 2, 3):
            await codex.driver.send(_start(f"turn {n}", turn=f"t{n}"))
            await codex.count(TurnFinished, n)
        await codex.driver.send(Rollback(turns=2, scope=RollbackScope.CONVERSATION))
        verdict = await codex.until(lambda e: isinstance(e, RollbackVerdict))
        assert verdict == RollbackVerdict(accepted=True)
        revert = next(m for m in codex.sent() if m.get("method") == "thread/revert")
        assert revert["params"] == {"threadId": "th-1", "beforeTurnId": "t2"}


async def test_rollback_beyond_the_history_is_refused(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(Rollback(turns=3, scope=RollbackScope.CONVERSATION))
        verdict = await codex.until(lambda e: isinstance(e, RollbackVerdict))
        assert isinstance(verdict, RollbackVerdict) and not verdict.accepted
        assert "thread/revert" not in codex.methods()


async def test_rolling_back_files_is_refused(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION_AND_FILES))
        verdict = await codex.until(lambda e: isinstance(e, RollbackVerdict))
        assert isinstance(verdict, RollbackVerdict) and not verdict.accepted


async def test_a_line_that_is_not_json_is_a_warning(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("NOISE"))
        noise = await codex.until(
            lambda e: isinstance(e, Emitted) and isinstance(e.kind, Diagnostic)
        )
        assert isinstance(noise, Emitted) and noise.problem == "not_json"


async def test_stop_ends_run_with_agent_exited(tmp_path: Path) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("HANG"))
        await codex.until(lambda e: e == TurnBegan())
        await codex.driver.stop(5.0)
        exited = await codex.until(lambda e: isinstance(e, AgentExited))
        assert isinstance(exited, AgentExited)


async def test_configure_on_an_older_codex_rides_on_the_next_turn(tmp_path: Path) -> None:
    async with _session(tmp_path, "old") as codex:
        await codex.driver.send(Configure(option="effort", value="high"))
        await codex.until(lambda e: isinstance(e, ConfigApplied))
        await codex.driver.send(_start("hello"))
        await codex.until(lambda e: isinstance(e, TurnFinished))
        start = next(m for m in codex.sent() if m.get("method") == "turn/start")
        assert start["params"]["effort"] == "high"


async def test_a_refused_compaction_is_a_failed_turn(tmp_path: Path) -> None:
    async with _session(tmp_path, "no-compact") as codex:
        await codex.driver.send(Compact())
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished)
        assert finished.stop == Failed("nothing to compact")
        assert codex.events.index(TurnBegan()) < codex.events.index(finished)


async def test_a_missing_login_is_auth_required(tmp_path: Path) -> None:
    error = await _open_error(tmp_path, "no-login")
    assert error.kind is ErrorKind.AUTH_REQUIRED


async def test_codex_exiting_during_the_handshake_is_process_exited(tmp_path: Path) -> None:
    error = await _open_error(tmp_path, "die")
    assert error.kind is ErrorKind.PROCESS_EXITED
    assert error.fields["status"] == "3"
    assert "cannot start" in str(error.fields["stderr"])


async def test_an_unknown_open_option_is_invalid_configuration(tmp_path: Path) -> None:
    error = await _open_error(tmp_path, configure=(("colour", "blue"),))
    assert error.kind is ErrorKind.INVALID_CONFIGURATION


def _home_seen(tmp_path: Path) -> Path:
    return Path((tmp_path / "sent.jsonl.home").read_text())


async def test_a_configured_codex_home_is_created_and_passed_on(tmp_path: Path) -> None:
    shared = tmp_path / "not-yet" / "codex-home"  # Codex refuses a CODEX_HOME that is missing
    async with _session(tmp_path, env=(("CODEX_HOME", str(shared)),)):
        assert _home_seen(tmp_path) == shared
        assert shared.is_dir()


async def test_isolate_home_gives_the_session_a_private_seeded_home(tmp_path: Path) -> None:
    shared = tmp_path / "shared-home"
    shared.mkdir()
    (shared / "config.toml").write_text('model_provider = "mock"\n')
    (shared / "history.jsonl").write_text("{}\n")
    env = (("CODEX_HOME", str(shared)),)
    async with _session(tmp_path, env=env, configure=(("isolate_home", True),)) as codex:
        private = _home_seen(tmp_path)
        assert private != shared and private.is_dir()
        assert (private / "config.toml").read_text() == 'model_provider = "mock"\n'
        assert not (private / "history.jsonl").exists()  # only config and login are seeded
        assert dict(codex.handshake.options)["isolate_home"] is True
    assert not private.exists()  # removed when the session stopped
    assert (shared / "history.jsonl").exists()
