"""No option dropped silently: what an agent cannot honour is refused, naming the option.

The agent's declared capabilities (`Capabilities.features`, its MCP
transports, the settings it offers) decide, in one place
(`pipeline/fidelity.py`), at `open` (and `generate`) once the handshake
is done, and at `prompt` for attachments. Shown here through a real
`corral serve --mock` process (every line schema-checked), and through the
fake app-server and fake Copilot agents, real subprocesses both.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import McpServer
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import Started, TextDelta
from corral.sources.appserver import catalog_entry as appserver_entry
from corral.sources.catalog import Catalog
from corral.sources.copilot import catalog_entry as copilot_entry

from tests.support.fake_appserver.drive import REPO_ROOT, Watcher, fake_ref

ServeMock = Callable[..., Awaitable[Any]]

MODEL = {
    "id": "model",
    "name": "Model",
    "kind": {"Select": {"choices": [{"value": "small", "label": "Small", "description": None}]}},
    "current": "small",
    "live": True,
}
STDIO_MCP = {"name": "tools", "connection": {"Stdio": {"command": "mcp", "args": [], "env": {}}}}
ENV = (("PYTHONPATH", str(REPO_ROOT)),)


async def refused(serve: Any, command: dict[str, Any]) -> dict[str, Any]:
    reply = await serve.request(command)
    assert "error" in reply, f"expected a refusal, got {reply}"
    error: dict[str, Any] = reply["error"]
    return error


def open_cmd(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"cmd": "open", "agent": "mock", "dir": str(tmp_path), **extra}


# ---- the mock, through `corral serve` ------------------------------------------------


REFUSED_AT_OPEN = [
    ({"resume": "mock-s9"}, "Resume", "resume"),
    ({"fork": "mock-s9"}, "Fork", "fork"),
    ({"fork_at": "t3"}, "Fork", "fork_at"),
    ({"mcp_servers": [STDIO_MCP]}, "McpServers", "mcp_servers"),
]


async def test_open_refuses_what_the_mock_does_not_declare(
    serve_mock: ServeMock, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": []})
    for extra, feature, option in REFUSED_AT_OPEN:
        error = await refused(serve, open_cmd(tmp_path, **extra))
        assert error["kind"] == "UnsupportedFeature", extra
        assert (error["feature"], error["option"]) == (feature, option)
    assert error["transport"] == "Stdio"  # the MCP refusal names the transport and server
    assert "tools" in error["message"]
    # The refused opens left no session behind; the next open is a plain success.
    assert not any("event" in line or "closed" in line for line in serve.lines)
    assert (await serve.ok(open_cmd(tmp_path)))["id"]
    assert await serve.finish() == 0


async def test_resume_is_accepted_where_the_mock_declares_it(
    serve_mock: ServeMock, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": [], "resume": True})
    info = await serve.ok(open_cmd(tmp_path, resume="mock-s9"))
    assert info["resume_token"] == "mock-s9"
    assert await serve.finish() == 0


async def test_a_configure_value_at_open_is_applied(serve_mock: ServeMock, tmp_path: Path) -> None:
    script = {"turns": [], "options": [{**MODEL, "kind": _choices("small", "large")}]}
    serve = await serve_mock(script)
    info = await serve.ok(open_cmd(tmp_path, configure={"model": "large"}))
    assert info["configuration"]["options"] == {"model": "large"}
    assert await serve.finish() == 0


async def test_a_configure_value_at_open_the_mock_does_not_offer_is_refused(
    serve_mock: ServeMock, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": [], "options": [MODEL]})
    for option, value, says in [
        ("effort", "high", "has no option 'effort'"),
        ("model", "huge", "not a valid value"),
    ]:
        error = await refused(serve, open_cmd(tmp_path, configure={option: value}))
        # The engine's `configure` rules: an option not offered, or a value not accepted.
        assert error["kind"] == "InvalidConfiguration"
        assert error["option"] == option
        assert says in error["message"]
    assert await serve.finish() == 0


async def test_generate_refuses_what_the_mock_does_not_declare(
    serve_mock: ServeMock, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": []})
    command = {"cmd": "generate", "agent": "mock", "dir": str(tmp_path), "prompt": "hi"}
    # (`resume` and `fork` are generate's own InvalidConfiguration: it continues nothing.)
    error = await refused(serve, {**command, "mcp_servers": [STDIO_MCP]})
    assert (error["kind"], error["feature"], error["option"]) == (
        "UnsupportedFeature",
        "McpServers",
        "mcp_servers",
    )
    error = await refused(serve, {**command, "configure": {"effort": "high"}})
    assert (error["kind"], error["option"]) == ("InvalidConfiguration", "effort")
    assert await serve.finish() == 0


async def test_an_image_attachment_to_an_agent_without_images_is_refused(
    serve_mock: ServeMock, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": []})
    sid = (await serve.ok(open_cmd(tmp_path)))["id"]
    prompt = {"cmd": "prompt", "session": sid, "text": "look"}
    error = await refused(serve, {**prompt, "attachments": ["notes.md", "shot.PNG"]})
    assert (error["kind"], error["feature"], error["option"]) == (
        "UnsupportedFeature",
        "Images",
        "attachments",
    )
    assert "shot.PNG" in error["message"]
    assert serve.events(sid) == []  # no turn started for the refused prompt
    delivery = await serve.ok({**prompt, "attachments": ["notes.md"]})
    assert "Started" in delivery["kind"]
    await serve.wait_event(sid, "TurnEnded")
    assert await serve.finish() == 0


def _choices(*values: str) -> dict[str, Any]:
    return {"Select": {"choices": [{"value": v, "label": v, "description": None} for v in values]}}


# ---- the app-server and native Copilot sources, through their fakes ------------------


@pytest.fixture
async def appserver_rt() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog([appserver_entry()]), transcripts=False) as rt:
        yield rt


@pytest.fixture
def fake_copilot(tmp_path: Path) -> dict[str, str]:
    """A `copilot` launcher that runs the fake, as the catalog's override names it."""
    launcher = tmp_path / "fake-copilot"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tests.support.fake_copilot\n')
    launcher.chmod(0o755)
    return {"CORRAL_COPILOT_NATIVE_BIN": str(launcher), "PATH": "/usr/bin:/bin"}


@pytest.fixture
async def copilot_rt(fake_copilot: dict[str, str]) -> AsyncIterator[Runtime]:
    catalog = Catalog([copilot_entry()])
    async with Runtime(catalog=catalog, environ=fake_copilot, transcripts=False) as rt:
        yield rt


STDIO = McpServer(name="tools", transport="Stdio", command="mcp")


@pytest.mark.parametrize(
    ("options", "kind", "option"),
    [
        ({"fork": "thread-1"}, ErrorKind.UNSUPPORTED_FEATURE, "fork"),
        ({"mcp_servers": (STDIO,)}, ErrorKind.UNSUPPORTED_FEATURE, "mcp_servers"),
        ({"configure": (("model", "gpt"),)}, ErrorKind.INVALID_CONFIGURATION, "model"),
    ],
)
async def test_the_appserver_source_refuses_what_its_agent_does_not_declare(
    appserver_rt: Runtime, tmp_path: Path, options: dict[str, Any], kind: ErrorKind, option: str
) -> None:
    with pytest.raises(CorralError) as failed:
        await appserver_rt.open(fake_ref(), str(tmp_path), env=ENV, **options)
    assert failed.value.kind is kind
    assert failed.value.fields["option"] == option
    assert appserver_rt.sessions() == []


async def test_the_appserver_source_refuses_an_image_attachment(
    appserver_rt: Runtime, tmp_path: Path
) -> None:
    session = await appserver_rt.open(fake_ref(), str(tmp_path), env=ENV)
    with pytest.raises(CorralError) as failed:
        await session.prompt("look", ("diagram.jpeg",))
    assert failed.value.fields["feature"] == "Images"
    watcher = Watcher(session)
    assert isinstance((await session.prompt("hello", ("notes.md",))).kind, Started)
    await watcher.until("TurnEnded")
    await session.close()


@pytest.mark.parametrize(
    ("options", "kind", "option"),
    [
        ({"fork": "sess-1"}, ErrorKind.UNSUPPORTED_FEATURE, "fork"),
        ({"fork_at": "t1"}, ErrorKind.UNSUPPORTED_FEATURE, "fork_at"),
        ({"configure": (("model", "gpt"),)}, ErrorKind.INVALID_CONFIGURATION, "model"),
    ],
)
async def test_the_copilot_source_refuses_what_copilot_does_not_declare(
    copilot_rt: Runtime, tmp_path: Path, options: dict[str, Any], kind: ErrorKind, option: str
) -> None:
    with pytest.raises(CorralError) as failed:
        await copilot_rt.open("copilot-native", str(tmp_path), env=ENV, **options)
    assert failed.value.kind is kind
    assert failed.value.fields["option"] == option
    assert copilot_rt.sessions() == []


async def test_the_copilot_source_passes_the_mcp_servers_it_declares(
    copilot_rt: Runtime, tmp_path: Path
) -> None:
    session = await copilot_rt.open("copilot-native", str(tmp_path), env=ENV, mcp_servers=(STDIO,))
    watcher = Watcher(session)
    with pytest.raises(CorralError) as failed:
        await session.prompt("look", ("shot.webp",))
    assert failed.value.fields["feature"] == "Images"
    await session.prompt("OPENED")
    events = await watcher.until("TurnEnded")
    said = json.loads("".join(e.kind.text for e in events if isinstance(e.kind, TextDelta)))
    assert said["mcpServers"] == {
        "tools": {"type": "local", "command": "mcp", "args": [], "env": {}, "tools": ["*"]}
    }
    await session.close()
