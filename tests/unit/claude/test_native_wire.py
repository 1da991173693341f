"""Claude Code's `--record-wire` reader against every golden scenario of the live protocol.

Each `tests/fixtures/claude/<scenario>.jsonl` (recorded from the real CLI:
plain, permission allowed / always / denied, question, cancel, cancel
before start, cancel during a permission, compact, configure, auth
failure, a file write) holds what corral wrote and what the CLI answered.
Rewritten in the shape `corral serve --record-wire` writes
(`sinks/transcript/_wire.py`: one `{"out": message}` / `{"in": message}`
per line), it is read by `read_claude_wire`, which has no driver commands,
only the recording: its events must be the live protocol's
(`support.replay`), but the prompt's `TurnBegan` (the import acknowledges
it) and the resume token, which the live driver knew at launch and the
recording learns from the CLI (`InfoChanged`). The app's answers read off
corral's replies are checked against the commands the recording ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.pipeline.driver import AnswerSent, InfoChanged, PromptSent, Respond, TurnBegan
from corral.sources.claude._native_wire import read_claude_wire

from .support import command_from_json, fixture_names, load, replay


def _as_recorded_wire(name: str, tmp_path: Path) -> Path:
    lines: list[dict[str, Any]] = []
    for record in load(name):
        if "out" in record:
            lines += [{"out": json.loads(line)} for line in record["out"].split("\n") if line]
        else:
            try:
                lines.append({"in": json.loads(record["in"])})
            except json.JSONDecodeError:
                lines.append({"in_text": record["in"]})
    path = tmp_path / f"{name}.wire.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _answers(name: str) -> list[AnswerSent]:
    """The app's answers the recording ran, as the import should read them back."""
    answers = []
    for record in load(name):
        command = command_from_json(record["command"]) if "command" in record else None
        if isinstance(command, Respond):
            answers.append(AnswerSent(request_id=command.request_id, answer=command.answer))
    return answers


def _prompts(name: str) -> list[str]:
    commands = [r["command"] for r in load(name) if "command" in r]
    return [
        c["StartTurn"]["text"] if "StartTurn" in c else "/compact"
        for c in commands
        if "StartTurn" in c or "Compact" in c
    ]


@pytest.mark.parametrize("name", fixture_names())
def test_a_recorded_claude_wire_gives_the_live_protocol_s_events(name: str, tmp_path: Path) -> None:
    read = list(read_claude_wire(_as_recorded_wire(name, tmp_path)))
    live = [e for e in replay(name).produced if not isinstance(e, TurnBegan)]
    learned = [i for i in read if isinstance(i, InfoChanged)]
    assert [i.resume_token for i in learned] == [replay(name).protocol.resume_token]
    events = [
        i for i in read if not isinstance(i, PromptSent | AnswerSent | InfoChanged | TurnBegan)
    ]
    assert events == live
    assert [i for i in read if isinstance(i, AnswerSent)] == _answers(name)
    # corral's `/compact` is a prompt on the wire: read back as one (the wire cannot tell)
    assert [i.text for i in read if isinstance(i, PromptSent)] == _prompts(name)
