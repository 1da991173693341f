"""corral's ACP client against agents built on the official ACP Python SDK.

The peer is real and nobody here wrote its protocol code: each agent is
`tests/support/acp_agents/scripted.py`, a subprocess whose behaviour the
prompt chooses (see its header), opened ad hoc as
`{"acp": {"name", "path", "args"}}` through the catalog's `acp` entry.
Every event is checked against the line-protocol schema.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib.metadata import version
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AcpRef, McpServer, PermissionMode
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Authenticated,
    Cancelled,
    Capability,
    CommandInput,
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    OtherAuth,
    PermissionAnswer,
    PermissionChoice,
    PlanStatus,
    PlanUpdated,
    ReasoningDelta,
    Refused,
    RequestOpened,
    SessionUpdated,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog

from tests.support.acp_agents.drive import Watcher, kinds

pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")

AGENT = Path(__file__).parents[1] / "support" / "acp_agents" / "scripted.py"

Opener = Callable[..., Awaitable[Watcher]]


def scripted(*args: str) -> AcpRef:
    return AcpRef(name="scripted", path=sys.executable, args=(str(AGENT), *args))


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog(catalog_entries())) as rt:
        yield rt


@pytest.fixture
def open_agent(runtime: Runtime, tmp_path: Path) -> Opener:
    async def open_(*args: str, **options: object) -> Watcher:
        session = await runtime.open(scripted(*args), str(tmp_path), **options)
        return Watcher(session)

    return open_


def texts(events: list[object]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))  # type: ignore[attr-defined]


def stop_of(events: list[object]) -> object:
    ended = [e.kind for e in events if isinstance(e.kind, TurnEnded)]  # type: ignore[attr-defined]
    assert len(ended) == 1
    return ended[0].stop


async def test_a_text_turn_streams_reasoning_and_text_then_completes(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("text")
    events = await watcher.turn()
    assert texts(events) == "Hello, world"
    assert any(isinstance(e.kind, ReasoningDelta) for e in events)
    assert kinds(events).count("MessageEnded") == 2  # thought and text, synthesized at turn end
    assert stop_of(events) == Completed()


async def test_open_reports_version_capabilities_and_settings(open_agent: Opener) -> None:
    watcher = await open_agent()
    info = watcher.session.info()
    assert info.details.version == "1.2.3"
    assert Capability.RESUME in info.details.capabilities
    assert Capability.PERMISSIONS in info.details.capabilities
    assert {o.id for o in info.details.config_options} == {"mode", "model"}
    assert dict(info.options) == {"mode": "default", "model": "fast"}
    assert info.resume_token and info.resume_token.startswith("scripted-")


async def permission_turn(watcher: Watcher, choice: PermissionChoice | None) -> list[object]:
    await watcher.session.prompt("tool")
    events: list[object] = list(await watcher.until_kind("RequestOpened"))
    if choice is None:
        return events
    request = events[-1].kind.request  # type: ignore[attr-defined]
    await watcher.session.answer(request.id, PermissionAnswer(choice))
    return events + await watcher.turn()


async def test_a_permission_request_offers_every_option_kind(open_agent: Opener) -> None:
    watcher = await open_agent()
    events = await permission_turn(watcher, PermissionChoice.ALLOW_ONCE)
    opened = next(e.kind for e in events if isinstance(e.kind, RequestOpened))  # type: ignore[attr-defined]
    assert opened.request.options == (
        PermissionChoice.ALLOW_ONCE,
        PermissionChoice.ALLOW_ALWAYS,
        PermissionChoice.DENY_ONCE,
        PermissionChoice.DENY_ALWAYS,
    )
    assert opened.request.tool.kind is ToolKind.EXECUTE
    assert opened.request.tool.input == CommandInput(command="touch x")


@pytest.mark.parametrize(
    ("choice", "said", "status"),
    [
        (PermissionChoice.ALLOW_ONCE, "allowed yes", ToolStatus.COMPLETED),
        (PermissionChoice.ALLOW_ALWAYS, "allowed yes-all", ToolStatus.COMPLETED),
        (PermissionChoice.DENY_ONCE, "denied no", ToolStatus.FAILED),
        (PermissionChoice.DENY_ALWAYS, "denied never", ToolStatus.FAILED),
    ],
)
async def test_the_answer_selects_the_option_of_that_kind(
    open_agent: Opener, choice: PermissionChoice, said: str, status: ToolStatus
) -> None:
    watcher = await open_agent()
    events = await permission_turn(watcher, choice)
    assert texts(events) == said
    tools = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]  # type: ignore[attr-defined]
    assert tools[-1].status is status
    assert stop_of(events) == Completed()


async def test_auto_approve_answers_without_the_app_seeing_a_request(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("tool")
    events = await watcher.turn()
    assert "RequestOpened" not in kinds(events)
    assert texts(events) == "allowed yes"


async def test_cancel_with_an_open_request_sends_the_cancelled_outcome(open_agent: Opener) -> None:
    watcher = await open_agent()
    events = await permission_turn(watcher, None)
    await watcher.session.cancel()
    events = await watcher.turn()
    assert "RequestClosed" in kinds(events)
    assert stop_of(events) == Cancelled()
    assert "Diagnostic" not in kinds(events)  # the agent confirmed: no cancel timeout


async def test_cancel_mid_stream_ends_the_turn_cancelled(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("slow")
    await watcher.until_kind("TextDelta")
    await watcher.session.cancel()
    events = await watcher.turn()
    assert stop_of(events) == Cancelled()
    await watcher.session.prompt("hello again")  # the session goes on
    assert texts(await watcher.turn()) == "You said: hello again"


async def test_a_plan_becomes_plan_updated(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("plan")
    events = await watcher.turn()
    plan = next(e.kind for e in events if isinstance(e.kind, PlanUpdated))  # type: ignore[attr-defined]
    assert [(p.text, p.status) for p in plan.entries] == [
        ("look", PlanStatus.COMPLETED),
        ("change", PlanStatus.IN_PROGRESS),
        ("test", PlanStatus.PENDING),
    ]


async def test_tool_diffs_and_locations_are_cumulative(open_agent: Opener, tmp_path: Path) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("diff")
    events = await watcher.turn()
    tools = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]  # type: ignore[attr-defined]
    last = tools[-1]
    assert last.kind is ToolKind.EDIT and last.status is ToolStatus.COMPLETED
    assert last.locations == (f"{tmp_path}/a.txt:3",)  # kept from the first snapshot
    assert [(d.old_text, d.new_text) for d in last.diffs] == [("old", "new")]


async def test_a_file_write_is_asked_as_an_edit_and_done_when_allowed(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("write notes/out.txt hello file")
    events = await watcher.until_kind("RequestOpened")
    request = events[-1].kind.request  # type: ignore[attr-defined]
    assert request.tool.kind is ToolKind.EDIT
    assert request.tool.diffs[0].old_text is None and request.tool.diffs[0].new_text == "hello file"
    assert not (tmp_path / "notes" / "out.txt").exists()
    await watcher.session.answer(request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    events = await watcher.turn()
    assert texts(events) == "wrote"
    assert (tmp_path / "notes" / "out.txt").read_text() == "hello file"


async def test_a_denied_file_write_is_not_done(open_agent: Opener, tmp_path: Path) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("write out.txt nope")
    request = (await watcher.until_kind("RequestOpened"))[-1].kind.request  # type: ignore[attr-defined]
    await watcher.session.answer(request.id, PermissionAnswer(PermissionChoice.DENY_ONCE))
    events = await watcher.turn()
    assert texts(events).startswith("write failed")
    assert not (tmp_path / "out.txt").exists()
    tools = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]  # type: ignore[attr-defined]
    assert tools[-1].status is ToolStatus.CANCELLED


async def test_a_write_outside_the_session_dir_is_refused_unasked(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("write ../escape.txt nope")
    events = await watcher.turn()
    assert "RequestOpened" not in kinds(events)
    assert texts(events).startswith("write failed")
    assert not (tmp_path.parent / "escape.txt").exists()


async def test_reads_are_served_inside_the_session_dir_only(
    open_agent: Opener, tmp_path: Path
) -> None:
    (tmp_path / "in.txt").write_text("inside")
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)  # reads are judged
    await watcher.session.prompt("read in.txt")
    assert texts(await watcher.turn()) == "read: inside"
    await watcher.session.prompt("read /etc/hostname")
    assert texts(await watcher.turn()).startswith("read failed")


async def test_initialize_offers_files_and_terminals_and_names_corral(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("caps")
    said = texts(await watcher.turn())
    assert (
        said == f"protocol 1 read True write True terminal True client corral {version('corral')}"
    )


async def test_unsupported_requests_are_declined_at_once_with_a_diagnostic(
    open_agent: Opener,
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("unsupported")
    events = await watcher.turn()  # the turn goes on to its end: nothing left unanswered
    # Elicitation gets the wire's own decline; a method corral does not know, -32601.
    assert texts(events) == "elicitation decline. ext error -32601"
    notes = [e for e in events if isinstance(e.kind, Diagnostic)]
    levels = {e.extensions["corral/declined"]: e.kind.level for e in notes}  # type: ignore[attr-defined]
    assert levels == {
        "elicitation/create": DiagnosticLevel.WARNING,
        "_scripted/ping": DiagnosticLevel.INFO,
    }


async def test_an_extension_notification_is_an_info_diagnostic(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("unknown")
    events = await watcher.turn()
    note = next(e for e in events if isinstance(e.kind, Diagnostic))
    assert note.kind.level is DiagnosticLevel.INFO  # type: ignore[attr-defined]
    assert note.extensions["acp/raw_frame"] == {"n": 1}
    assert texts(events) == "after unknown"


async def test_a_line_that_is_not_json_is_a_warning_and_the_turn_goes_on(
    open_agent: Opener,
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("noise")
    events = await watcher.turn()
    note = next(e for e in events if isinstance(e.kind, Diagnostic))
    assert note.extensions["corral/decode_error"] == "not_json"
    assert texts(events) == "after noise"


@pytest.mark.parametrize(
    ("option", "value"), [("mode", "plan"), ("model", "smart")], ids=["set_mode", "config"]
)
async def test_configure_goes_through_the_agent(
    open_agent: Opener, option: str, value: str
) -> None:
    watcher = await open_agent()
    info = await watcher.session.configure(option, value)
    assert dict(info.options)[option] == value
    updated = await watcher.until(
        lambda e: isinstance(e.kind, SessionUpdated) and dict(e.kind.info.options)[option] == value
    )
    assert kinds(updated) == ["SessionUpdated"]  # one update: the agent's confirmation


async def test_an_invalid_configure_value_is_refused(open_agent: Opener) -> None:
    watcher = await open_agent()
    with pytest.raises(CorralError) as refused:
        await watcher.session.configure("mode", "turbo")
    assert refused.value.kind is ErrorKind.INVALID_CONFIGURATION


async def test_a_mode_the_agent_switches_itself_updates_the_session(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("mode")
    events = await watcher.turn()
    updates = [e.kind.info for e in events if isinstance(e.kind, SessionUpdated)]  # type: ignore[attr-defined]
    assert dict(updates[-1].options)["mode"] == "plan"


async def test_usage_becomes_context_usage_with_tokens(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("usage")
    events = await watcher.turn()
    usages = [e for e in events if isinstance(e.kind, ContextUsage)]
    assert usages[-1].kind == ContextUsage(used_tokens=1200, window_tokens=200000)
    assert usages[-1].extensions["corral/tokens"] == {"input": 1000, "output": 300, "reasoning": 20}


@pytest.mark.parametrize(
    ("prompt", "stop"),
    [
        ("refuse", Refused()),
        ("maxtokens", Failed("the agent stopped: max_tokens (the model's output limit)")),
    ],
)
async def test_stop_reasons_map_to_turn_ends(open_agent: Opener, prompt: str, stop: object) -> None:
    watcher = await open_agent()
    await watcher.session.prompt(prompt)
    assert stop_of(await watcher.turn()) == stop


async def test_auth_required_is_answered_with_an_agent_method(open_agent: Opener) -> None:
    watcher = await open_agent("--require-auth")
    assert isinstance(watcher.session.info().details.auth, Authenticated)
    await watcher.session.prompt("hi")
    assert texts(await watcher.turn()) == "You said: hi"


async def test_resume_loads_the_session_without_replaying_history(open_agent: Opener) -> None:
    watcher = await open_agent(resume="scripted-earlier")
    assert watcher.session.info().resume_token == "scripted-earlier"
    note = await watcher.next()
    assert isinstance(note.kind, Diagnostic)
    assert note.extensions["acp/replayed_updates"] == 2
    await watcher.session.prompt("opened")
    assert texts(await watcher.turn()) == "load"


async def test_without_load_session_resume_uses_session_resume(open_agent: Opener) -> None:
    watcher = await open_agent("--resume-only", resume="scripted-earlier")
    info = watcher.session.info()
    assert info.resume_token == "scripted-earlier"
    assert Capability.RESUME in info.details.capabilities
    await watcher.session.prompt("opened")
    events = await watcher.turn()
    assert texts(events) == "resume"
    assert "Diagnostic" not in kinds(events)  # session/resume replays nothing to drop


@pytest.mark.parametrize("flags", [(), ("--resume-only",)], ids=["load", "resume"])
async def test_a_refused_resume_is_resume_failed(
    runtime: Runtime, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    with pytest.raises(CorralError) as failed:
        await runtime.open(scripted(*flags), str(tmp_path), resume="scripted-gone")
    assert failed.value.kind is ErrorKind.RESUME_FAILED
    assert "scripted-gone" in failed.value.message


async def test_another_protocol_version_is_protocol_failed(
    runtime: Runtime, tmp_path: Path
) -> None:
    with pytest.raises(CorralError) as failed:
        await runtime.open(scripted("--protocol", "2"), str(tmp_path))
    assert failed.value.kind is ErrorKind.PROTOCOL_FAILED
    assert "version 2" in failed.value.message


TOKEN_VAR = "CORRAL_TEST_SCRIPTED_TOKEN"


async def test_auth_with_no_usable_method_is_auth_required(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    with pytest.raises(CorralError) as failed:
        await runtime.open(scripted("--env-auth", TOKEN_VAR), str(tmp_path))
    assert failed.value.kind is ErrorKind.AUTH_REQUIRED
    assert "A token in the environment" in failed.value.message  # names the offered method


async def test_an_env_var_method_is_used_once_its_variable_is_set(open_agent: Opener) -> None:
    watcher = await open_agent("--env-auth", TOKEN_VAR, env=((TOKEN_VAR, "secret"),))
    auth = watcher.session.info().details.auth
    assert auth == Authenticated(kind=OtherAuth("env-login"))


async def test_the_agent_dying_mid_turn_fails_the_turn_and_the_session(
    open_agent: Opener,
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("die")
    events = await watcher.turn()
    assert isinstance(stop_of(events), Failed)
    await watcher.rest()
    failure = watcher.session.failure
    assert failure is not None and failure.kind is ErrorKind.PROCESS_EXITED
    assert failure.fields["status"] == "3"
    assert "goodbye" in str(failure.fields["stderr"])


async def test_a_missing_executable_is_not_installed(runtime: Runtime, tmp_path: Path) -> None:
    ref = AcpRef(name="ghost", path=str(tmp_path / "no-such-agent"))
    with pytest.raises(CorralError) as failed:
        await runtime.open(ref, str(tmp_path))
    assert failed.value.kind is ErrorKind.NOT_INSTALLED


async def test_probe_reads_the_initialize_answer(runtime: Runtime) -> None:
    details = await runtime.probe(scripted())
    assert details.version == "1.2.3"
    assert Capability.RESUME in details.capabilities


async def test_mcp_servers_reach_the_agent_in_acp_shapes(open_agent: Opener) -> None:
    servers = (
        McpServer(
            name="files", transport="Stdio", command="/bin/mcp", args=("-v",), env=(("K", "v"),)
        ),
        McpServer(name="web", transport="Http", url="http://x/mcp", headers=(("H", "h"),)),
    )
    watcher = await open_agent("--mcp-http", mcp_servers=servers)
    await watcher.session.prompt("mcp")
    assert json.loads(texts(await watcher.turn())) == [
        {
            "name": "files",
            "command": "/bin/mcp",
            "args": ["-v"],
            "env": [{"name": "K", "value": "v"}],
        },
        {
            "type": "http",
            "name": "web",
            "url": "http://x/mcp",
            "headers": [{"name": "H", "value": "h"}],
        },
    ]


async def test_an_mcp_transport_the_agent_does_not_offer_is_unsupported(
    runtime: Runtime, tmp_path: Path
) -> None:
    server = McpServer(name="web", transport="Sse", url="http://x/sse")
    with pytest.raises(CorralError) as failed:
        await runtime.open(scripted("--mcp-http"), str(tmp_path), mcp_servers=(server,))
    assert failed.value.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert failed.value.fields["feature"] == "McpServers"


async def test_available_commands_land_in_the_session_details(open_agent: Opener) -> None:
    watcher = await open_agent()
    assert watcher.session.info().details.commands == ()
    await watcher.session.prompt("commands")
    updated = await watcher.until_kind("SessionUpdated")
    assert [c.name for c in updated[-1].kind.info.details.commands] == ["review", "plan"]  # type: ignore[attr-defined]
    await watcher.turn()
    commands = watcher.session.info().details.commands
    assert [(c.name, c.description) for c in commands] == [
        ("review", "Review the change"),
        ("plan", "Make a plan"),
    ]
