"""The Claude driver around a real subprocess: a scripted stand-in CLI.

The stand-in (tests/fixtures/claude/fake_claude.py) speaks the recorded
wire shapes and does on cue what the real CLI does only sometimes: exit
after an interrupt, die mid-turn, refuse a resume, exit before its
handshake. Sessions run through the real Runtime, engine and actor; every
event is checked against the line-protocol schema.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Cancelled,
    Completed,
    Event,
    Failed,
    TextDelta,
    TurnEnded,
)
from corral.pipeline.telemetry import Telemetry
from corral.sources.catalog import Catalog
from corral.sources.claude import catalog_entry

from tests.support.schema import check
from tests.unit.claude.support import FIXTURES

TIMEOUT = 30.0


class Recorder:
    """A telemetry observer that keeps what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def _note(self, name: str, *args: object) -> None:
        self.calls.append((name, args))

    def process_started(self, agent: str) -> None:
        self._note("started", agent)

    def process_exited(self, agent: str, status: str) -> None:
        self._note("exited", agent, status)

    def process_restarted(self, agent: str) -> None:
        self._note("restarted", agent)

    def decode_error(self, agent: str, kind: str) -> None:
        self._note("decode_error", kind)

    def unknown_frame(self, agent: str) -> None:
        self._note("unknown_frame")

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        self._note("wire", direction)

    def count(self, name: str) -> int:
        return sum(1 for call, _ in self.calls if call == name)


class Fake:
    def __init__(self, tmp_path: Path, mode: str) -> None:
        self.log = tmp_path / "argv.log"
        self.log.touch()
        self.shim = tmp_path / "claude"
        self.shim.write_text(
            f"#!{sys.executable}\nimport runpy\n"
            f"runpy.run_path({str(FIXTURES / 'fake_claude.py')!r}, run_name='__main__')\n"
        )
        self.shim.chmod(0o755)
        self.workdir = tmp_path / "work"
        self.workdir.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "FAKE_CLAUDE_MODE": mode,
            "FAKE_CLAUDE_LOG": str(self.log),
            "CORRAL_CLAUDE_BIN": str(self.shim),
        }
        self.telemetry = Recorder()

    def launches(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def runtime(self) -> Runtime:
        return Runtime(
            catalog=Catalog([catalog_entry(environ=self.env)]),
            environ=self.env,
            telemetry=Telemetry([self.telemetry]),
        )


async def until_turn_ends(events: AsyncIterator[Event], seen: list[Event]) -> TurnEnded:
    async with asyncio.timeout(TIMEOUT):
        async for event in events:
            check("line-protocol.schema.json", "Event", event.to_wire())
            seen.append(event)
            if isinstance(event.kind, TurnEnded):
                return event.kind
    raise AssertionError("the stream ended before the turn did")


async def until_text(events: AsyncIterator[Event], seen: list[Event]) -> None:
    async with asyncio.timeout(TIMEOUT):
        async for event in events:
            check("line-protocol.schema.json", "Event", event.to_wire())
            seen.append(event)
            if isinstance(event.kind, TextDelta):
                return


def text(seen: list[Event]) -> str:
    return "".join(e.kind.text for e in seen if isinstance(e.kind, TextDelta))


async def test_a_prompt_is_answered_on_one_process_kept_across_turns(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        seen: list[Event] = []
        await session.prompt("one")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        await session.prompt("two")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        assert text(seen) == "echo: oneecho: two"
        await session.close()
    assert len(fake.launches()) == 1
    assert fake.telemetry.count("wire") > 0


async def test_open_reports_the_minted_session_as_resume_token(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        info = session.info()
        argv = fake.launches()[0]
        assert info.resume_token == argv[argv.index("--session-id") + 1]
        assert info.details.version == "9.9.9-fake"
        await session.close()


async def test_cli_exiting_after_interrupt_is_restarted_with_resume(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "exit_on_interrupt")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        token = session.info().resume_token
        events = aiter(session.events())
        seen: list[Event] = []
        await session.prompt("slow one")
        await until_text(events, seen)
        await session.cancel()
        assert (await until_turn_ends(events, seen)).stop == Cancelled()
        await session.prompt("after")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        assert text(seen).endswith("echo: after")
        assert session.failure is None
        await session.close()
    first, second = fake.launches()
    assert "--resume" not in first
    assert second[second.index("--resume") + 1] == token
    assert fake.telemetry.count("restarted") == 1


async def test_cli_dying_mid_turn_fails_the_turn_and_the_session(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "crash_mid_turn")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        seen: list[Event] = []
        await session.prompt("hi")
        end = await until_turn_ends(events, seen)
        assert isinstance(end.stop, Failed)
        await session.wait_closed()
        failure = session.failure
        assert failure is not None and failure.kind is ErrorKind.PROCESS_EXITED
        assert failure.fields["status"] == "3"
        assert "boom" in str(failure.fields["stderr"])
    assert fake.telemetry.count("restarted") == 0


async def test_resuming_a_missing_conversation_is_resume_failed(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "dead_resume")
    async with fake.runtime() as runtime:
        with pytest.raises(CorralError) as raised:
            await runtime.open("claude", dir=str(fake.workdir), resume="gone-token")
    assert raised.value.kind is ErrorKind.RESUME_FAILED
    assert "No conversation found" in raised.value.message


async def test_exit_before_the_handshake_is_process_exited_with_stderr(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "no_handshake")
    async with fake.runtime() as runtime:
        with pytest.raises(CorralError) as raised:
            await runtime.open("claude", dir=str(fake.workdir))
    assert raised.value.kind is ErrorKind.PROCESS_EXITED
    assert raised.value.fields["status"] == "2"
    assert "unknown option" in str(raised.value.fields["stderr"])


async def test_close_leaves_no_process_behind(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        await session.close()
        await session.wait_closed()
    assert fake.telemetry.count("started") == fake.telemetry.count("exited") == 1


_SYSTEM_DIRS = ("/usr/local/bin", "/opt/homebrew/bin", "/usr/bin")


@pytest.mark.skipif(
    any(os.path.exists(os.path.join(d, "claude")) for d in _SYSTEM_DIRS),
    reason="a claude is installed system-wide here, so it cannot be missing",
)
async def test_missing_cli_is_not_installed_with_the_install_hint(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    async with Runtime(catalog=Catalog([catalog_entry(environ=env)]), environ=env) as runtime:
        report = await runtime.discover()
        (missing,) = report.missing
        assert missing.install_hint == "npm install -g @anthropic-ai/claude-code"
        assert any("CORRAL_CLAUDE_BIN" in place for place in missing.searched)
        with pytest.raises(CorralError) as raised:
            await runtime.open("claude", dir=str(tmp_path))
    assert raised.value.kind is ErrorKind.NOT_INSTALLED
    assert raised.value.fields["install_hint"] == "npm install -g @anthropic-ai/claude-code"
