"""Rollback and effort through the Claude driver, around the stand-in CLI.

The stand-in (tests/fixtures/claude/fake_claude.py) logs every launch's
argv and every control request it gets, so these tests read what corral
put on the wire: the files' rewind to the dropped turn's prompt, the fork
(`--resume --fork-session --resume-session-at <kept entry> --session-id`),
the effort flag and `apply_flag_settings`. Sessions run through the real
Runtime, engine and actor; every event is checked against the schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.commands import RollbackScope
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import Completed, Event

from tests.unit.claude.test_driver import Fake, text, until_turn_ends


def controls(fake: Fake) -> list[dict[str, Any]]:
    path = Path(str(fake.log) + ".controls")
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def prompt(fake: Fake, text: str) -> str:
    """The uuid corral minted for the prompt `text` (as the stand-in received it)."""
    (uuid,) = [c["uuid"] for c in controls(fake) if c["subtype"] == "user" and c["text"] == text]
    return str(uuid)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


async def run_turns(fake: Fake, scope: RollbackScope) -> tuple[list[Event], str, str]:
    """Three turns, roll back the last; a fourth on the fork. Returns seen, tokens."""
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        first_token = session.info().resume_token
        assert first_token is not None
        events = aiter(session.events())
        seen: list[Event] = []
        for prompt in ("one", "two", "three"):
            await session.prompt(prompt)
            assert (await until_turn_ends(events, seen)).stop == Completed()
        await session.rollback(1, scope)
        await session.prompt("four")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        token = session.info().resume_token
        assert token is not None
        assert session.failure is None
        await session.close()
    return seen, first_token, token


async def test_rollback_forks_the_cli_at_the_last_kept_turn(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    seen, first_token, token = await run_turns(fake, RollbackScope.CONVERSATION)
    first, fork = fake.launches()
    assert "--fork-session" not in first
    assert flag(fork, "--resume") == first_token and "--fork-session" in fork
    # the fake's chain entry of the second turn: the third turn is gone
    assert flag(fork, "--resume-session-at") == f"entry-{prompt(fake, 'two')}"
    assert flag(fork, "--session-id") == token != first_token
    assert text(seen).endswith("echo: four")
    assert [e.sequence for e in seen] == list(range(seen[0].sequence, seen[-1].sequence + 1))
    assert not any(c["subtype"] == "rewind_files" for c in controls(fake))
    assert fake.telemetry.count("restarted") == 1


async def test_rollback_with_files_rewinds_to_the_dropped_prompt_first(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    await run_turns(fake, RollbackScope.CONVERSATION_AND_FILES)
    (rewind,) = [c for c in controls(fake) if c["subtype"] == "rewind_files"]
    assert rewind == {"subtype": "rewind_files", "user_message_id": prompt(fake, "three")}
    _, fork = fake.launches()
    assert flag(fork, "--resume-session-at") == f"entry-{prompt(fake, 'two')}"


async def test_a_refused_files_rewind_refuses_the_rollback_and_keeps_the_process(
    tmp_path: Path,
) -> None:
    fake = Fake(tmp_path, "no_rewind")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        seen: list[Event] = []
        await session.prompt("one")
        await until_turn_ends(events, seen)
        with pytest.raises(CorralError) as raised:
            await session.rollback(1, RollbackScope.CONVERSATION_AND_FILES)
        assert raised.value.kind is ErrorKind.INVALID_REQUEST
        assert "File rewinding is not enabled" in raised.value.message
        await session.prompt("two")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        await session.close()
    assert len(fake.launches()) == 1


async def test_rolling_back_more_turns_than_ran_is_refused(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        await session.prompt("one")
        await until_turn_ends(events, [])
        with pytest.raises(CorralError) as raised:
            await session.rollback(2, RollbackScope.CONVERSATION)
        assert raised.value.kind is ErrorKind.INVALID_REQUEST
        await session.close()
    assert len(fake.launches()) == 1


async def test_rolling_back_every_turn_starts_a_fresh_cli_session(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        seen: list[Event] = []
        await session.prompt("one")
        await until_turn_ends(events, seen)
        await session.rollback(1, RollbackScope.CONVERSATION)
        await session.prompt("two")
        assert (await until_turn_ends(events, seen)).stop == Completed()
        token = session.info().resume_token
        await session.close()
    _, fresh = fake.launches()
    assert "--resume" not in fresh and flag(fresh, "--session-id") == token


async def test_a_fork_that_cannot_start_refuses_the_rollback_and_ends_the_session(
    tmp_path: Path,
) -> None:
    fake = Fake(tmp_path, "dead_fork")
    async with fake.runtime() as runtime:
        session = await runtime.open("claude", dir=str(fake.workdir))
        events = aiter(session.events())
        for prompt in ("one", "two"):
            await session.prompt(prompt)
            await until_turn_ends(events, [])
        with pytest.raises(CorralError) as raised:
            await session.rollback(1, RollbackScope.CONVERSATION)
        assert raised.value.kind is ErrorKind.INVALID_REQUEST
        assert "could not fork" in raised.value.message
        await session.wait_closed()
        failure = session.failure
        assert failure is not None and failure.kind is ErrorKind.PROCESS_EXITED
        assert "No conversation found" in str(failure.fields["stderr"])


async def test_effort_is_a_launch_flag_and_a_live_setting(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "normal")
    async with fake.runtime() as runtime:
        session = await runtime.open(
            "claude", dir=str(fake.workdir), configure=(("effort", "high"),)
        )
        assert dict(session.info().options)["effort"] == "high"
        info = await session.configure("effort", "low")
        assert dict(info.options)["effort"] == "low"
        info = await session.configure("effort", "default")
        assert dict(info.options)["effort"] == "default"
        with pytest.raises(CorralError) as raised:
            await session.configure("effort", "huge")
        assert raised.value.kind is ErrorKind.INVALID_CONFIGURATION
        await session.close()
    (argv,) = fake.launches()
    assert flag(argv, "--effort") == "high"
    settings = [c["settings"] for c in controls(fake) if c["subtype"] == "apply_flag_settings"]
    assert settings == [{"effortLevel": "low"}, {"effortLevel": None}]
