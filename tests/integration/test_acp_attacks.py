"""An ACP agent that attacks corral: each attack fails, and the session goes on.

The agent is `tests/support/acp_agents/scripted.py` (its attack prompts are
in `attacks.py`), a real subprocess on the ACP Python SDK, driven through
an in-process `Runtime`; every event is checked against the line-protocol
schema (`Watcher`). The session directory is a folder of the test's temp
dir, so whatever an attack aims at "outside" is a throwaway sibling folder.
Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AcpRef, PermissionMode
from corral.pipeline.events import (
    CommandInput,
    Diagnostic,
    DiagnosticLevel,
    Event,
    PathInput,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    RequestOpened,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.pipeline.rules import load_policy
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog

from tests.support.acp_agents.drive import Watcher, kinds
from tests.support.serve import ServeProcess

pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")

AGENT = Path(__file__).parents[1] / "support" / "acp_agents" / "scripted.py"
ASK = PermissionMode.ASK
AUTO = PermissionMode.AUTO_APPROVE

Opener = Callable[..., Awaitable[Watcher]]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog(catalog_entries()), policy_loader=load_policy) as rt:
        yield rt


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    inside = tmp_path / "session"
    inside.mkdir()
    return inside


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A throwaway folder next to the session directory, with a file an attack wants."""
    there = tmp_path / "outside"
    there.mkdir()
    (there / "secret.txt").write_text("OUTSIDE-SECRET")
    return there


@pytest.fixture
def open_agent(runtime: Runtime, session_dir: Path) -> Opener:
    async def open_(mode: PermissionMode = ASK, **options: object) -> Watcher:
        ref = AcpRef(name="scripted", path=sys.executable, args=(str(AGENT),))
        session = await runtime.open(ref, str(session_dir), permission_mode=mode, **options)
        return Watcher(session)

    return open_


def texts(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def opened(events: list[Event]) -> list[PermissionRequest]:
    found = [e.kind.request for e in events if isinstance(e.kind, RequestOpened)]
    return [request for request in found if isinstance(request, PermissionRequest)]


def warnings(events: list[Event]) -> list[Event]:
    return [
        e
        for e in events
        if isinstance(e.kind, Diagnostic) and e.kind.level is DiagnosticLevel.WARNING
    ]


def ends_or_asks(event: Event) -> bool:
    return isinstance(event.kind, TurnEnded | RequestOpened)


async def next_request(watcher: Watcher) -> tuple[list[Event], PermissionRequest]:
    events = await watcher.until(ends_or_asks)
    assert isinstance(events[-1].kind, RequestOpened), texts(events)
    request = events[-1].kind.request
    assert isinstance(request, PermissionRequest)
    return events, request


async def answer(watcher: Watcher, request: PermissionRequest, choice: PermissionChoice) -> None:
    await watcher.session.answer(request.id, PermissionAnswer(choice))


async def still_healthy(watcher: Watcher) -> None:
    await watcher.session.prompt("hello again")
    assert texts(await watcher.turn()) == "You said: hello again"


# ---- 1. decisions are bound to what was judged ----------------------------------------


async def test_an_allow_does_not_carry_over_to_a_tool_changed_while_it_was_asked(
    open_agent: Opener, session_dir: Path
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("swap echo harmless => touch pwned")
    events, judged = await next_request(watcher)
    assert judged.tool.input == CommandInput(command="echo harmless")
    # The agent changes the call while its request waits: answer once the change is seen,
    # so the allow always meets the changed tool (not a race with the agent's update).
    events += await watcher.until(
        lambda event: (
            isinstance(event.kind, ToolUpdated)
            and getattr(event.kind.tool.input, "command", None) == "touch pwned"
        )
    )
    await answer(watcher, judged, PermissionChoice.ALLOW_ONCE)
    more, run = await next_request(watcher)  # the changed command is asked about afresh
    assert run.tool.input == CommandInput(command="touch pwned", cwd=str(session_dir))
    await answer(watcher, run, PermissionChoice.DENY_ONCE)
    events += more + await watcher.turn()
    assert texts(events).startswith("outcome no. then error -32800")
    assert any("acp/changed_tool" in e.extensions for e in warnings(events))
    assert not (session_dir / "pwned").exists()
    await still_healthy(watcher)


async def test_a_grant_is_for_the_very_command_line_approved_and_is_used_once(
    open_agent: Opener,
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("grant echo ok")
    events, asked = await next_request(watcher)
    await answer(watcher, asked, PermissionChoice.ALLOW_ONCE)
    more, padded = await next_request(watcher)  # "echo ok " is not "echo ok"
    assert padded.tool.input == CommandInput(command="echo ok ", cwd=padded.tool.input.cwd)  # type: ignore[union-attr]
    await answer(watcher, padded, PermissionChoice.DENY_ONCE)
    events += more
    more, again = await next_request(watcher)  # the exact line ran on the grant; once
    assert again.tool.input.command == "echo ok"  # type: ignore[union-attr]
    await answer(watcher, again, PermissionChoice.DENY_ONCE)
    events += more + await watcher.turn()
    assert texts(events) == "padded error -32800. first exit 0. second error -32800"


# ---- 3. terminal/create shows everything; env that changes what runs is judged ----------


@pytest.mark.parametrize("variable", ["PATH=/tmp/nowhere", "LD_PRELOAD=/tmp/x.so", "GIT_DIR=.x"])
async def test_env_that_changes_what_runs_is_asked_even_under_auto_approve(
    open_agent: Opener, session_dir: Path, variable: str
) -> None:
    watcher = await open_agent(AUTO)
    await watcher.session.prompt(f"termenv {variable} echo hi")
    events, request = await next_request(watcher)
    name, _, value = variable.partition("=")
    assert PermissionChoice.ALLOW_ONCE not in request.options
    assert request.detail is not None and name in request.detail
    assert request.tool.raw is not None
    assert request.tool.raw.input == {
        "command": "echo hi",
        "args": [],
        "cwd": str(session_dir),
        "env": {name: value},
    }
    await answer(watcher, request, PermissionChoice.DENY_ONCE)
    assert texts(events + await watcher.turn()) == "error -32800"


async def test_a_harmless_env_runs_under_auto_approve_without_asking(open_agent: Opener) -> None:
    watcher = await open_agent(AUTO)
    await watcher.session.prompt("termenv FOO=bar echo hi")
    events = await watcher.turn()
    assert "RequestOpened" not in kinds(events)
    assert texts(events) == "exit 0"


async def test_env_that_changes_what_runs_is_denied_when_nobody_answers(
    open_agent: Opener, tmp_path: Path
) -> None:
    policy = tmp_path / "unattended.toml"
    policy.write_text('version = 1\nmode = "AutoApprove"\ndeadline = 1\non_timeout = "allow"\n')
    watcher = await open_agent(AUTO, policy=str(policy))
    await watcher.session.prompt("termenv PATH=/tmp/nowhere echo hi")
    events = await watcher.turn()
    assert texts(events) == "error -32800"  # the deadline's allow cannot pick it: denied


# ---- 2. reads are judged like every other access ---------------------------------------


async def test_a_read_is_a_read_tool_the_app_is_asked_about(
    open_agent: Opener, session_dir: Path
) -> None:
    (session_dir / "in.txt").write_text("inside")
    watcher = await open_agent()
    await watcher.session.prompt("read in.txt")
    events, request = await next_request(watcher)
    assert request.tool.kind is ToolKind.READ
    assert request.tool.input == PathInput(str(session_dir / "in.txt"))
    await answer(watcher, request, PermissionChoice.ALLOW_ONCE)
    events += await watcher.turn()
    assert texts(events) == "read: inside"
    shown = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]
    assert [t.status for t in shown if t.id == request.tool.id] == [
        ToolStatus.PENDING,
        ToolStatus.COMPLETED,
    ]


async def test_a_denied_read_is_an_error_to_the_agent(
    open_agent: Opener, session_dir: Path
) -> None:
    (session_dir / "in.txt").write_text("inside")
    watcher = await open_agent()
    await watcher.session.prompt("read in.txt")
    events, request = await next_request(watcher)
    await answer(watcher, request, PermissionChoice.DENY_ONCE)
    said = texts(events + await watcher.turn())
    assert said.startswith("read failed") and "inside" not in said


@pytest.mark.parametrize("preset", ["AutoApprove", "AcceptEdits", "Ask"])
async def test_secret_files_are_never_read_under_any_preset(
    open_agent: Opener, session_dir: Path, preset: str
) -> None:
    watcher = await open_agent(policy=f"preset:{preset}")
    for name in (".env", "deploy.pem", "id_ed25519", ".env.production"):
        (session_dir / name).write_text("TOKEN=hunter2")
        await watcher.session.prompt(f"read {name}")
        events = await watcher.turn()
        assert "RequestOpened" not in kinds(events), (preset, name)
        said = texts(events)
        assert said.startswith("read failed") and "hunter2" not in said, (preset, name)
        assert "credential" in said  # the guard's message reaches the agent


# ---- 4. no escape from the session directory --------------------------------------------


ATTACKS = [
    "read link.txt",  # a link inside, pointing outside
    "read linkdir/secret.txt",  # a folder that is a link outside
    "read ../outside/secret.txt",
    "read sub/../../outside/secret.txt",
    "read {outside}/secret.txt",
    "read /dev/zero",
    "read fifo",  # must not hang
    "read sub",  # a folder
    "write link.txt pwned",
    "write linkdir/new.txt pwned",
    "write ../outside/new.txt pwned",
    "write fifo pwned",
    "write {outside}/new.txt pwned",
]


async def test_paths_never_lead_out_of_the_session_directory(
    open_agent: Opener, session_dir: Path, outside: Path
) -> None:
    (session_dir / "sub").mkdir()
    (session_dir / "link.txt").symlink_to(outside / "secret.txt")
    (session_dir / "linkdir").symlink_to(outside)
    os.mkfifo(session_dir / "fifo")
    watcher = await open_agent(AUTO)
    for attack in ATTACKS:
        await watcher.session.prompt(attack.format(outside=outside))
        events = await watcher.turn(timeout=20)
        said = texts(events)
        assert "failed" in said and "OUTSIDE-SECRET" not in said, (attack, said)
        assert "RequestOpened" not in kinds(events), attack  # refused before anyone is asked
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET"
    assert os.listdir(outside) == ["secret.txt"]
    assert (session_dir / "link.txt").is_symlink()
    await still_healthy(watcher)


async def test_a_folder_swapped_for_a_link_while_the_write_waits_is_not_followed(
    open_agent: Opener, session_dir: Path, outside: Path
) -> None:
    (session_dir / "sub").mkdir()
    watcher = await open_agent()
    await watcher.session.prompt("write sub/new.txt pwned")
    events, request = await next_request(watcher)
    (session_dir / "sub").rename(session_dir / "sub.old")
    (session_dir / "sub").symlink_to(outside)  # judged inside; now it leads out
    await answer(watcher, request, PermissionChoice.ALLOW_ONCE)
    assert texts(events + await watcher.turn()).startswith("write failed")
    assert os.listdir(outside) == ["secret.txt"]


async def test_a_file_swapped_for_a_hard_link_while_the_write_waits_is_not_written(
    open_agent: Opener, session_dir: Path, outside: Path
) -> None:
    (session_dir / "f.txt").write_text("mine")
    watcher = await open_agent()
    await watcher.session.prompt("write f.txt pwned")
    events, request = await next_request(watcher)
    (session_dir / "f.txt").unlink()
    os.link(outside / "secret.txt", session_dir / "f.txt")  # same name, another file
    await answer(watcher, request, PermissionChoice.ALLOW_ONCE)
    assert texts(events + await watcher.turn()).startswith("write failed")
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET"


async def test_a_file_swapped_for_a_link_while_the_read_waits_is_not_read(
    open_agent: Opener, session_dir: Path, outside: Path
) -> None:
    (session_dir / "f.txt").write_text("mine")
    watcher = await open_agent()
    await watcher.session.prompt("read f.txt")
    events, request = await next_request(watcher)
    (session_dir / "f.txt").unlink()
    (session_dir / "f.txt").symlink_to(outside / "secret.txt")
    await answer(watcher, request, PermissionChoice.ALLOW_ONCE)
    said = texts(events + await watcher.turn())
    assert said.startswith("read failed") and "OUTSIDE-SECRET" not in said


async def test_a_terminal_cwd_through_a_link_is_refused(
    open_agent: Opener, session_dir: Path, outside: Path
) -> None:
    (session_dir / "linkdir").symlink_to(outside)
    watcher = await open_agent(AUTO)
    cwd = session_dir / "linkdir"
    request = f'{{"method": "terminal/create", "params": {{"command": "ls", "cwd": "{cwd}"}}}}'
    await watcher.session.prompt(f"raw {request}")
    assert texts(await watcher.turn()).startswith("error -32602")


# ---- 5. bad paths are clean errors; no request handler ends the session ------------------


@pytest.mark.parametrize(
    "params",
    [
        '{"path": "a\\u0000b"}',
        '{"path": "' + "a/" * 2100 + '"}',
        '{"path": "' + "x" * 300 + '"}',
        '{"path": ""}',
        '{"path": 42}',
        "{}",
    ],
)
async def test_a_bad_path_is_a_clean_error_and_the_session_goes_on(
    open_agent: Opener, params: str
) -> None:
    watcher = await open_agent(AUTO)
    await watcher.session.prompt(f'raw {{"method": "fs/read_text_file", "params": {params}}}')
    said = texts(await watcher.turn())
    assert said.startswith("error -32602"), said
    await watcher.session.prompt(
        f'raw {{"method": "fs/write_text_file", "params": {params[:-1]}, "content": "x"}}}}'
        if params != "{}"
        else 'raw {"method": "fs/write_text_file", "params": {"content": "x"}}'
    )
    said = texts(await watcher.turn())
    assert said.startswith("error -32602"), said
    await still_healthy(watcher)


@pytest.mark.parametrize(
    "path",
    [
        "a\\ud800b",  # a lone surrogate escape: JSON that orjson (rightly) refuses
        "aBADBYTEb",  # a byte that is not UTF-8
    ],
)
async def test_a_request_that_is_not_valid_json_text_still_gets_an_answer(
    open_agent: Opener, path: str
) -> None:
    watcher = await open_agent(AUTO)
    line = (
        '{"jsonrpc":"2.0","id":999999,"method":"fs/read_text_file",'
        f'"params":{{"sessionId":"SESSION","path":"{path}"}}}}'
    )
    await watcher.session.prompt(f"rawline {line}")
    events = await watcher.turn()
    assert texts(events) == "answer -32700"
    assert any(e.extensions.get("corral/decode_error") == "not_json" for e in warnings(events))
    await still_healthy(watcher)


@pytest.mark.parametrize(
    "params",
    [
        '{"command": "echo", "args": ["a\\u0000"]}',
        '{"command": "echo", "env": [{"name": "A", "value": "\\u0000"}]}',
        '{"command": "echo", "cwd": "/nonexistent\\u0000"}',
        '{"command": "echo", "cwd": 7}',
    ],
)
async def test_a_bad_terminal_request_is_a_clean_error(open_agent: Opener, params: str) -> None:
    watcher = await open_agent(AUTO)
    await watcher.session.prompt(f'raw {{"method": "terminal/create", "params": {params}}}')
    said = texts(await watcher.turn())
    assert said.startswith("error -32602"), said
    await still_healthy(watcher)


# ---- 6. pending work is capped per session ----------------------------------------------


async def test_ten_thousand_permission_requests_are_capped(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("flood permission 10000 64")
    events = await watcher.until(lambda e: "refused" in texts([e]), timeout=60)
    assert texts(events) == "refused 9936. "
    assert len(opened(events)) == 64
    limits = [e for e in warnings(events) if e.extensions.get("acp/limit") == "open_requests"]
    assert len(limits) == 1  # one warning for the crossing, not one per refusal
    await watcher.session.cancel()
    await watcher.turn(timeout=60)
    await still_healthy(watcher)


async def test_ten_thousand_waits_for_exit_are_capped(open_agent: Opener) -> None:
    watcher = await open_agent(AUTO)
    await watcher.session.prompt("flood wait 10000 64")
    events = await watcher.turn(timeout=90)
    assert texts(events) == "refused 9936. refused 9936 errors [-32603]"
    assert any(e.extensions.get("acp/limit") == "exit_waits" for e in warnings(events))
    await still_healthy(watcher)


# ---- through `corral serve`: what the app and the transcript see of a read ------------


def line_texts(serve: ServeProcess, session: str) -> str:
    return "".join(
        event["kind"]["TextDelta"]["text"]
        for event in serve.events(session)
        if isinstance(event["kind"], dict) and "TextDelta" in event["kind"]
    )


async def test_through_serve_a_read_is_a_read_tool_in_the_stream_and_the_transcript(
    session_dir: Path, tmp_path: Path
) -> None:
    (session_dir / "in.txt").write_text("inside")
    (session_dir / ".env").write_text("TOKEN=hunter2")
    archive = tmp_path / "transcripts"
    serve = await ServeProcess.start("--transcripts", str(archive))
    try:
        agent = {"acp": {"name": "scripted", "path": sys.executable, "args": [str(AGENT)]}}
        opened = await serve.ok({"cmd": "open", "agent": agent, "dir": str(session_dir)})
        sid = opened["id"]
        await serve.ok({"cmd": "prompt", "session": sid, "text": "read in.txt"})
        asked = (await serve.wait_event(sid, "RequestOpened"))["kind"]["RequestOpened"]
        tool = asked["Permission"]["tool"]
        assert tool["kind"] == "Read"
        assert tool["input"] == {"Path": str(session_dir / "in.txt")}
        answer = {"Permission": "AllowOnce"}
        request_id = asked["Permission"]["id"]
        await serve.ok({"cmd": "answer", "session": sid, "request": request_id, "answer": answer})
        await serve.wait_event(sid, "TurnEnded")
        await serve.ok({"cmd": "prompt", "session": sid, "text": "read .env"})
        await serve.wait_event(sid, "TurnEnded", count=2)
        assert serve.kinds(sid).count("RequestOpened") == 1  # the secret was never asked about
        said = line_texts(serve, sid)
        assert said.startswith("read: inside") and "read failed" in said
        assert "hunter2" not in said
        await serve.ok({"cmd": "close", "session": sid})
        await serve.wait_for(lambda line: line.get("closed") == sid)
        assert await serve.finish() == 0
    finally:
        await serve.kill()
    records = [
        json.loads(line)
        for path in archive.rglob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    reads = [
        r["event"]["kind"]["ToolUpdated"]
        for r in records
        if isinstance(r.get("event"), dict)
        and "ToolUpdated" in json.dumps(r["event"].get("kind"))
        and r["event"]["kind"]["ToolUpdated"]["kind"] == "Read"
    ]
    assert {tool["status"] for tool in reads} >= {"Pending", "Completed"}
    decided = [r["decision"]["decided_by"] for r in records if "decision" in r]
    assert "guard:secret-read" in decided  # the deny of .env is on the record
