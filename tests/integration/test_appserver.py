"""The app-server source against the fake app-server agent, a real subprocess.

The fake (`tests/support/fake_appserver`) speaks the seed's JSON-RPC wire
and checks both directions against the seed schema; it is opened ad hoc
as `{"appserver": {"name", "path", "args"}}` through the catalog's
`appserver` entry, or through a catalog entry of its own (`agent_entry`).
Every corral event is checked against the line-protocol schema by the
watcher.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AppServerRef, PermissionMode
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Cancelled,
    Capability,
    CommandInput,
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Event,
    Failed,
    PermissionAnswer,
    PermissionChoice,
    RequestOpened,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.pipeline.rules import load_policy
from corral.sources.appserver import agent_entry, catalog_entry
from corral.sources.catalog import Catalog

from tests.support.fake_appserver import MODULE
from tests.support.fake_appserver.drive import REPO_ROOT, Watcher, fake_ref, kind_name

Opener = Callable[..., Awaitable[Watcher]]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog([catalog_entry()])) as rt:
        yield rt


ENV = (("PYTHONPATH", str(REPO_ROOT)),)


@pytest.fixture
def open_fake(runtime: Runtime, tmp_path: Path) -> Opener:
    async def open_(**options: object) -> Watcher:
        session = await runtime.open(fake_ref(), str(tmp_path), env=ENV, **options)
        return Watcher(session)

    return open_


def text_of(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def ended(events: list[Event]) -> TurnEnded:
    last = events[-1].kind
    assert isinstance(last, TurnEnded)
    return last


def tools(events: list[Event]) -> list[ToolUpdated]:
    return [e.kind for e in events if isinstance(e.kind, ToolUpdated)]


async def test_the_handshake_names_the_thread_and_the_protocol_features(open_fake: Opener) -> None:
    watcher = await open_fake()
    info = watcher.session.info()
    assert info.resume_token == "thread-1"
    assert info.details.version == "fake-appserver/1.0"
    features = info.details.capabilities.features
    assert {Capability.PERMISSIONS, Capability.STEER, Capability.RESUME} <= features
    await watcher.session.close()


async def test_a_text_turn_streams_its_text_and_ends_completed(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("hello there")
    events = await watcher.until("TurnEnded")
    assert text_of(events) == "You said: hello there"
    assert "MessageEnded" in [kind_name(e) for e in events]
    assert ended(events).stop == Completed()
    assert events[-1].extensions["appserver/checkpoint"]["key"] == "turn-1-checkpoint"
    await watcher.session.close()


async def test_the_turns_token_usage_rides_on_its_end(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("hello")
    events = await watcher.until("TurnEnded")
    usage = [e for e in events if isinstance(e.kind, ContextUsage)]
    assert usage[-1].extensions["corral/tokens"] == {"input": 120, "output": 30}
    await watcher.session.close()


async def test_a_tool_call_is_one_snapshot_from_running_to_completed(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("TOOL please")
    events = await watcher.until("TurnEnded")
    updates = tools(events)
    assert [u.tool.status for u in updates] == [
        ToolStatus.RUNNING,
        ToolStatus.RUNNING,
        ToolStatus.COMPLETED,
    ]
    assert updates[-1].tool.kind is ToolKind.EXECUTE
    assert updates[-1].tool.input == CommandInput(command="echo hi")
    assert updates[-1].tool.output == "hi"
    assert text_of(events) == "Tool said: hi"
    await watcher.session.close()


async def approval(
    watcher: Watcher, choice: PermissionChoice, message: str | None = None
) -> list[Event]:
    await watcher.session.prompt("APPROVE the write")
    events = await watcher.until("RequestOpened")
    request = events[-1].kind
    assert isinstance(request, RequestOpened)
    await watcher.session.answer(request.request.id, PermissionAnswer(choice))
    return events + await watcher.until("TurnEnded")


async def test_an_allowed_approval_lets_the_tool_run(open_fake: Opener) -> None:
    watcher = await open_fake()
    events = await approval(watcher, PermissionChoice.ALLOW_ONCE)
    assert tools(events)[-1].tool.status is ToolStatus.COMPLETED
    assert text_of(events) == "approved: allow"
    assert "RequestClosed" in [kind_name(e) for e in events]
    await watcher.session.close()


async def test_allow_always_is_sent_as_allow_session(open_fake: Opener) -> None:
    watcher = await open_fake()
    events = await approval(watcher, PermissionChoice.ALLOW_ALWAYS)
    assert text_of(events) == "approved: allow_session"
    await watcher.session.close()


async def test_a_denied_approval_fails_the_tool_and_the_turn_goes_on(open_fake: Opener) -> None:
    watcher = await open_fake()
    events = await approval(watcher, PermissionChoice.DENY_ONCE)
    assert tools(events)[-1].tool.status is ToolStatus.FAILED
    assert text_of(events) == "denied: (no reason)"  # the app's deny carries no message
    assert ended(events).stop == Completed()
    await watcher.session.close()


async def test_a_policy_deny_sends_its_message_as_the_reason(tmp_path: Path) -> None:
    rules = tmp_path / "policy.toml"
    rules.write_text('[[rule]]\nid = "no-writes"\naction = "deny"\nmessage = "not today"\n')
    catalog = Catalog([catalog_entry()])
    async with Runtime(catalog=catalog, policy=load_policy(str(rules))) as runtime:
        watcher = Watcher(await runtime.open(fake_ref(), str(tmp_path), env=ENV))
        await watcher.session.prompt("APPROVE the write")
        events = await watcher.until("TurnEnded")
        assert "RequestOpened" not in [kind_name(e) for e in events]
        assert text_of(events) == "denied: not today"
        await watcher.session.close()


async def test_cancel_with_an_open_approval_withdraws_it_as_a_deny(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("APPROVE the write")
    await watcher.until("RequestOpened")
    await watcher.session.cancel()
    events = await watcher.until("TurnEnded")
    assert "RequestClosed" in [kind_name(e) for e in events]
    assert tools(events)[-1].tool.status is ToolStatus.FAILED
    assert text_of(events) == "denied: withdrawn: nobody will answer"
    await watcher.session.close()


async def test_auto_approve_answers_the_approval_without_the_app(open_fake: Opener) -> None:
    watcher = await open_fake(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("APPROVE the write")
    events = await watcher.until("TurnEnded")
    assert "RequestOpened" not in [kind_name(e) for e in events]
    assert text_of(events) == "approved: allow"
    await watcher.session.close()


async def test_a_steer_joins_the_running_turn(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("SLOW please")
    await watcher.until("TextDelta")
    delivery = await watcher.session.prompt("go left")
    assert kind_name_of(delivery) == "Steered"
    events = await watcher.until("TurnEnded")
    assert "steered: go left" in text_of(events)
    assert ended(events).stop == Completed()
    await watcher.session.close()


def kind_name_of(delivery: object) -> str:
    wire = delivery.to_wire()  # type: ignore[attr-defined]
    kind = wire["kind"]
    return kind if isinstance(kind, str) else next(iter(kind))


async def test_cancel_interrupts_the_turn(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("SLOW please")
    await watcher.until("TextDelta")
    await watcher.session.cancel()
    events = await watcher.until("TurnEnded")
    assert ended(events).stop == Cancelled()
    assert events[-1].extensions["appserver/status"] == "interrupted"
    await watcher.session.prompt("after the cancel")
    assert text_of(await watcher.until("TurnEnded")) == "You said: after the cancel"
    await watcher.session.close()


async def test_a_warning_becomes_a_warning_diagnostic(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("WARN me")
    events = await watcher.until("TurnEnded")
    warnings = [e for e in events if isinstance(e.kind, Diagnostic)]
    assert [w.kind.level for w in warnings] == [DiagnosticLevel.WARNING]
    assert warnings[0].extensions["appserver/code"] == "fake_warning"
    await watcher.session.close()


async def test_a_failed_turn_ends_failed_with_the_agents_error(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("FAIL now")
    events = await watcher.until("TurnEnded")
    assert ended(events).stop == Failed("the model failed")
    await watcher.session.close()


async def test_an_agent_crash_fails_the_turn_and_the_session_with_its_stderr(
    open_fake: Opener,
) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("CRASH now")
    events = await watcher.until("TurnEnded")
    assert isinstance(ended(events).stop, Failed)
    await watcher.rest()
    await watcher.session.wait_closed()
    failure = watcher.session.failure
    assert failure is not None and failure.kind is ErrorKind.PROCESS_EXITED
    assert failure.fields["status"] == "3"
    assert "crashing on purpose" in str(failure.fields["stderr"])


async def test_a_resumed_session_continues_the_same_thread(open_fake: Opener) -> None:
    watcher = await open_fake(resume="thread-9")
    assert watcher.session.info().resume_token == "thread-9"
    await watcher.session.prompt("hello again")
    assert text_of(await watcher.until("TurnEnded")) == "You said: hello again"
    await watcher.session.close()


async def test_a_line_that_is_not_json_rpc_is_a_warning_and_the_turn_goes_on(
    open_fake: Opener,
) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("NOISE please")
    events = await watcher.until("TurnEnded")
    noise = [e for e in events if isinstance(e.kind, Diagnostic)]
    assert [n.extensions["corral/decode_error"] for n in noise] == ["not_json"]
    assert text_of(events) == "after the noise"
    await watcher.session.close()


async def test_a_request_corral_does_not_serve_is_refused_and_reported(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("ASK_CLIENT please")
    events = await watcher.until("TurnEnded")
    reported = [e for e in events if "corral/unknown_frame" in e.extensions]
    assert [r.extensions["corral/unknown_frame"] for r in reported] == ["client/pickColor"]
    assert text_of(events) == "the client said: corral does not serve client/pickColor"
    await watcher.session.close()


async def test_an_agent_that_dies_before_its_handshake_fails_the_open(
    runtime: Runtime, tmp_path: Path
) -> None:
    dead = AppServerRef(name="dead", path=sys.executable, args=("-c", "import sys; sys.exit(4)"))
    with pytest.raises(CorralError) as failed:
        await runtime.open(dead, str(tmp_path))
    assert failed.value.kind is ErrorKind.PROCESS_EXITED
    assert failed.value.fields["status"] == "4"


async def test_a_server_of_another_protocol_version_is_refused(
    runtime: Runtime, tmp_path: Path
) -> None:
    base = fake_ref()
    other = AppServerRef(name=base.name, path=base.path, args=(*base.args, "--protocol-v2"))
    with pytest.raises(CorralError) as failed:
        await runtime.open(other, str(tmp_path), env=ENV)
    assert failed.value.kind is ErrorKind.PROTOCOL_FAILED
    assert "v2" in failed.value.message


async def test_thread_start_names_the_agent_key_and_the_session_dir(
    open_fake: Opener, tmp_path: Path
) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("THREAD")
    said = json.loads(text_of(await watcher.until("TurnEnded")))
    assert said == {"agentKey": "fake", "cwd": str(tmp_path)}
    await watcher.session.close()


async def test_an_agent_of_the_catalog_is_opened_by_its_id(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "fake-appserver"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {MODULE} "$@"\n')
    launcher.chmod(0o755)
    entry = agent_entry(
        id="fake-app",
        name="Fake app-server",
        executable="fake-appserver",
        install_hint="it lives in the test's folder",
        known_dirs=(str(bin_dir),),
    )
    async with Runtime(catalog=Catalog([entry])) as runtime:
        watcher = Watcher(await runtime.open("fake-app", str(tmp_path), env=ENV))
        assert watcher.session.info().agent.executable_path == str(launcher)
        await watcher.session.prompt("THREAD")
        said = json.loads(text_of(await watcher.until("TurnEnded")))
        assert said == {"agentKey": "fake-app", "cwd": str(tmp_path)}
        await watcher.session.close()
