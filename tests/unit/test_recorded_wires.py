"""corral's own `--record-wire` files read back: Claude Code, Codex, Copilot (SDK server), ACP.

Golden fixtures recorded from the real CLIs against the mock model by
`tests/fixtures/wire/record.py` (a real `corral serve --record-wire`, two
prompts: a shell tool corral asks about and the app allows, then a plain
answer). Each is read by its source's reader (`sources/<name>/
_native_wire.py` over `sources/_recorded_wire.py`), then run through a
real engine (`actors.replay.replay`) so every event is checked against the
line-protocol schema. A torn or garbled line and an unknown wire are built
from the fixtures' own lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.actors.replay import NativeReaders, ReplaySession, imported_installation, replay
from corral.pipeline.driver import (
    AnswerSent,
    Emitted,
    PromptSent,
    ReplayItem,
    RequestAsked,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    Completed,
    Diagnostic,
    DiagnosticLevel,
    Event,
    PermissionAnswer,
    PermissionChoice,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.pipeline.records import Closed, Decision
from corral.sources._recorded_wire import unknown_wire
from corral.sources.claude._requests import WITHDRAWN_MESSAGE

from tests.support.schema import check

FIXTURES = Path(__file__).parents[1] / "fixtures"
WIRES = FIXTURES / "wire"
# format id -> the fixture corral recorded for it
FORMATS = {
    "claude-wire": WIRES / "claude.wire.jsonl",
    "codex-wire": WIRES / "codex.wire.jsonl",
    "copilot-wire": WIRES / "copilot-native.wire.jsonl",
    "acp": WIRES / "gemini-acp.wire.jsonl",
}
PROMPTS = ["CORRAL_TOOL: touch made.txt", "Say something plain"]


def _read(format_id: str, path: Path) -> list[ReplayItem]:
    return list(NativeReaders().get(format_id)(path))


def _diagnostics(items: list[ReplayItem]) -> list[Emitted]:
    return [i for i in items if isinstance(i, Emitted) and isinstance(i.kind, Diagnostic)]


@pytest.mark.parametrize("format_id", sorted(FORMATS))
def test_each_recorded_wire_is_recognized_as_its_own_format_only(format_id: str) -> None:
    assert NativeReaders().detect(FORMATS[format_id]) == format_id


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "claude" / "transcripts" / "write_file.jsonl",
        FIXTURES / "copilot" / "real" / "copilot-1.0.102.events.jsonl",
        FIXTURES / "gemini" / "session.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_the_agents_own_files_are_not_taken_for_recorded_wires(path: Path) -> None:
    assert path.exists(), path
    assert not str(NativeReaders().detect(path)).endswith("-wire")


@pytest.mark.parametrize("format_id", ["claude-wire", "codex-wire", "copilot-wire"])
def test_a_recorded_wire_reads_the_prompts_the_tool_and_two_completed_turns(
    format_id: str,
) -> None:
    items = _read(format_id, FORMATS[format_id])
    prompts = [i for i in items if isinstance(i, PromptSent)]
    assert [p.text for p in prompts] == PROMPTS
    assert all(p.at_ns is not None and p.at_ns > 1_700_000_000 * 10**9 for p in prompts)
    finished = [i.stop for i in items if isinstance(i, TurnFinished)]
    assert [type(stop) for stop in finished] == [Completed, Completed]
    tools = [
        i.kind.tool for i in items if isinstance(i, Emitted) and isinstance(i.kind, ToolUpdated)
    ]
    assert {t.id for t in tools} == {tools[0].id}  # one tool call, updated as it ran
    assert tools[0].kind is ToolKind.EXECUTE and tools[-1].status is ToolStatus.COMPLETED
    texts = "".join(
        i.kind.text for i in items if isinstance(i, Emitted) and isinstance(i.kind, TextDelta)
    )
    assert texts.startswith("Tool said:") and texts.endswith("You said: Say something plain")
    assert not [d for d in _diagnostics(items) if d.problem is not None]  # nothing misread


@pytest.mark.parametrize("format_id", sorted(FORMATS))
def test_a_recorded_wire_replays_into_two_closed_turns_the_schema_accepts(
    format_id: str,
) -> None:
    session = ReplaySession(
        session_id="imported", agent=imported_installation(format_id), started_ns=0
    )
    records = list(replay(_read(format_id, FORMATS[format_id]), session=session))
    events = [r for r in records if isinstance(r, Event)]
    for event in events:
        check("line-protocol.schema.json", "Event", event.to_wire())
    ends = [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]
    assert [type(stop) for stop in ends] == [Completed, Completed]
    assert isinstance(records[-1], Closed)


@pytest.mark.parametrize("format_id", ["claude-wire", "codex-wire", "copilot-wire"])
def test_a_torn_or_garbled_line_is_a_warning_and_loses_nothing_else(
    format_id: str, tmp_path: Path
) -> None:
    lines = FORMATS[format_id].read_bytes().splitlines()
    middle = len(lines) // 2
    bad = [lines[middle][: len(lines[middle]) // 2], b'{"neither": 1}', b'{"dropped": 2}']
    wire = tmp_path / "x.wire.jsonl"
    wire.write_bytes(b"\n".join([*lines[:middle], *bad, *lines[middle:]]) + b"\n")

    items = _read(format_id, wire)
    clean = _read(format_id, FORMATS[format_id])
    notes = [d for d in _diagnostics(items) if d not in _diagnostics(clean)]
    assert [n.kind.level for n in notes] == [DiagnosticLevel.WARNING] * 3  # type: ignore[union-attr]
    assert [n.problem.value if n.problem else None for n in notes] == [
        "not_json",
        "bad_shape",
        None,
    ]
    assert "2 wire lines" in notes[2].kind.message  # type: ignore[union-attr]
    assert [i for i in items if i not in notes] == clean


# How corral's reply to the permission request reads, per wire: (allow once, deny, withdrawn)
REPLIES: dict[str, tuple[Any, Any, Any]] = {
    "claude-wire": (
        None,
        {"behavior": "deny", "message": "no"},
        {"behavior": "deny", "message": WITHDRAWN_MESSAGE},
    ),
    "codex-wire": (None, {"decision": "decline"}, {"decision": "cancel"}),
    "copilot-wire": (None, {"kind": "reject"}, {"kind": "user-not-available"}),
    "acp": (
        None,
        {"outcome": {"outcome": "selected", "optionId": "cancel"}},  # Gemini's reject_once
        {"outcome": {"outcome": "cancelled"}},
    ),
}


def _with_reply(format_id: str, reply: Any, tmp_path: Path) -> Path:
    """The fixture, with corral's reply to the permission request replaced by `reply`."""
    lines = []
    for line in FORMATS[format_id].read_bytes().splitlines():
        value = orjson.loads(line)
        sent = value.get("out", {})
        if sent.get("type") == "control_response":
            sent["response"]["response"] = reply
        elif "method" not in sent and "result" in sent:
            answers = "decision" in sent["result"] or "outcome" in sent["result"]
            sent["result"] = reply if answers else sent["result"]
        elif sent.get("method") == "session.permissions.handlePendingPermissionRequest":
            sent["params"]["result"] = reply
        lines.append(orjson.dumps(value))
    wire = tmp_path / "x.wire.jsonl"
    wire.write_bytes(b"\n".join(lines) + b"\n")
    return wire


@pytest.mark.parametrize("format_id", sorted(REPLIES))
@pytest.mark.parametrize(
    ("case", "choice"),
    [(0, PermissionChoice.ALLOW_ONCE), (1, PermissionChoice.DENY_ONCE), (2, None)],
    ids=["allowed", "denied", "withdrawn"],
)
def test_the_app_s_answer_is_read_off_corral_s_reply(
    format_id: str, case: int, choice: PermissionChoice | None, tmp_path: Path
) -> None:
    reply = REPLIES[format_id][case]
    path = FORMATS[format_id] if reply is None else _with_reply(format_id, reply, tmp_path)
    items = _read(format_id, path)
    (asked,) = [i.request.id for i in items if isinstance(i, RequestAsked)]
    answers = [i for i in items if isinstance(i, AnswerSent)]
    expected = (
        [] if choice is None else [AnswerSent(request_id=asked, answer=PermissionAnswer(choice))]
    )
    assert answers == expected
    session = ReplaySession(session_id="i", agent=imported_installation(format_id), started_ns=0)
    records = list(replay(items, session=session))
    (decision,) = [r for r in records if isinstance(r, Decision)]
    expected_decision = {None: "cancelled", PermissionChoice.ALLOW_ONCE: "allow_once"}
    assert decision.decision == expected_decision.get(choice, "deny_once")
    assert (decision.decided_by == "app") is (choice is not None)  # else: the agent, turn end


@pytest.mark.parametrize("format_id", ["claude-wire", "codex-wire", "acp"])
def test_a_prompt_s_turn_is_acknowledged_by_the_import_not_the_wire(format_id: str) -> None:
    # These wires mark each prompt's turn once (Copilot marks each model round too: a
    # no-op for the engine, live as well); the mark of the prompt's turn is dropped.
    assert not [i for i in _read(format_id, FORMATS[format_id]) if isinstance(i, TurnBegan)]


def test_a_wire_no_source_reads_back_is_named_by_what_it_begins_with(tmp_path: Path) -> None:
    wire = tmp_path / "other.wire.jsonl"
    lines = [
        {"out": {"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {}}, "at": {}},
        {"in": {"jsonrpc": "2.0", "id": 1, "result": {}}, "at": {}},
        {"dropped": 1},
    ]
    wire.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert NativeReaders().detect(wire) is None
    why = unknown_wire(wire)
    assert why is not None
    assert "--record-wire" in why and "first out message: method 'hello'" in why
    assert "first in message: keys id, jsonrpc, result" in why

    not_a_wire = tmp_path / "notes.jsonl"
    not_a_wire.write_bytes(b'{"hello": 1}\n')
    assert unknown_wire(not_a_wire) is None
    assert unknown_wire(FIXTURES / "gemini" / "session.jsonl") is None
