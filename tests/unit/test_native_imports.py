"""The native transcript readers of `sources/acp/`: Gemini CLI, opencode, corral's recorded wires.

Golden fixtures recorded from the real CLIs against the mock model
(`tests/fixtures/gemini/record.py`, `tests/fixtures/opencode/record.py`,
`tests/fixtures/wire/record.py`), read
into replay items, then through a real engine (`actors.replay.replay`) so
every event is checked against the line-protocol schema. Edge cases the
real CLIs do not produce on demand (a torn last line, a lost wire line)
are built from the fixtures' own lines.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from corral.actors.replay import NativeReaders, ReplaySession, imported_installation, replay
from corral.pipeline.driver import Emitted, PromptSent, ReplayItem, TurnBegan, TurnFinished
from corral.pipeline.events import (
    Cancelled,
    CommandInput,
    Completed,
    Diagnostic,
    DiagnosticLevel,
    Event,
    Failed,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.pipeline.records import Closed, SinkItem
from corral.sources.acp._native_gemini import read_gemini_session, recognizes_gemini_line
from corral.sources.acp._native_opencode import (
    read_opencode_export,
    recognizes_opencode_export,
)
from corral.sources.acp._native_wire import read_acp_wire, recognizes_acp_wire_line
from corral.sources.registry import default_catalog

from tests.support.schema import check

FIXTURES = Path(__file__).parents[1] / "fixtures"
GEMINI = FIXTURES / "gemini" / "session.jsonl"
WIRE = FIXTURES / "wire" / "gemini-acp.wire.jsonl"
OPENCODE = FIXTURES / "opencode" / "session.json"


def _texts(items: list[ReplayItem]) -> str:
    return "".join(
        i.kind.text for i in items if isinstance(i, Emitted) and isinstance(i.kind, TextDelta)
    )


def _tools(items: list[ReplayItem]) -> list[ToolUpdated]:
    return [i.kind for i in items if isinstance(i, Emitted) and isinstance(i.kind, ToolUpdated)]


def _prompts(items: list[ReplayItem]) -> list[str]:
    return [i.text for i in items if isinstance(i, PromptSent)]


def _replayed(items: list[ReplayItem], format_id: str) -> list[SinkItem]:
    session = ReplaySession(
        session_id="imported", agent=imported_installation(format_id, format_id), started_ns=0
    )
    records = list(replay(items, session=session))
    for record in records:
        if isinstance(record, Event):
            check("line-protocol.schema.json", "Event", record.to_wire())
    return records


def _turn_ends(records: list[SinkItem]) -> list[TurnEnded]:
    return [r.kind for r in records if isinstance(r, Event) and isinstance(r.kind, TurnEnded)]


# ---- the catalog declares them ------------------------------------------------------------


def test_the_default_catalog_declares_gemini_chats_and_acp_wires() -> None:
    formats = {native.format: native for native in default_catalog().native_transcripts()}
    assert formats["gemini"].read is read_gemini_session
    assert formats["acp"].read is read_acp_wire
    assert formats["opencode"].read is read_opencode_export
    readers = NativeReaders()
    assert readers.detect(GEMINI) == "gemini"
    assert readers.detect(WIRE) == "acp"
    assert readers.detect(OPENCODE) == "opencode"  # one pretty-printed document, read whole


def test_a_json_document_no_format_knows_is_not_detected(tmp_path: Path) -> None:
    other = tmp_path / "settings.json"
    other.write_text('{\n  "info": {"id": "x"},\n  "theme": "dark"\n}\n')
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "info": {"id": ')
    assert NativeReaders().detect(other) is None
    assert NativeReaders().detect(broken) is None


# ---- Gemini CLI --------------------------------------------------------------------------


def test_gemini_chat_reads_prompts_tool_calls_and_answers_in_order() -> None:
    items = list(read_gemini_session(GEMINI))
    # The resumed session restates its history in `$set.messages`: nothing comes twice.
    assert _prompts(items) == ["CORRAL_TOOL: echo hello-import", "Say something plain"]
    (tool,) = _tools(items)
    assert tool.tool.kind is ToolKind.EXECUTE
    assert tool.tool.status is ToolStatus.COMPLETED
    assert tool.tool.input == CommandInput(command="echo hello-import")
    assert tool.tool.output == "hello-import"
    assert _texts(items) == "Tool said: hello-importYou said: Say something plain"
    order = [
        type(i).__name__ if not isinstance(i, Emitted) else type(i.kind).__name__ for i in items
    ]
    assert order.index("ToolUpdated") < order.index("TextDelta")
    assert isinstance(items[0], PromptSent) and items[0].at_ns is not None


def test_gemini_chat_skips_the_cli_s_session_context_and_tool_results() -> None:
    items = list(read_gemini_session(GEMINI))
    assert not any("<session_context>" in text for text in _prompts(items))
    assert not any("functionResponse" in text for text in _prompts(items))


def test_gemini_chat_header_is_recognized_and_other_lines_are_not() -> None:
    header, *rest = (orjson.loads(line) for line in GEMINI.read_bytes().splitlines())
    assert recognizes_gemini_line(header, GEMINI)
    assert not any(
        recognizes_gemini_line(value, GEMINI) for value in rest if "sessionId" not in value
    )
    assert not recognizes_gemini_line({"sessionId": "x", "type": "user"}, GEMINI)


def test_gemini_chat_with_a_torn_last_line_keeps_the_rest_and_warns(tmp_path: Path) -> None:
    torn = tmp_path / "session-torn.jsonl"
    torn.write_bytes(GEMINI.read_bytes() + b'{"id":"cut","type":"gem')
    items = list(read_gemini_session(torn))
    warnings = [i.kind for i in items if isinstance(i, Emitted) and isinstance(i.kind, Diagnostic)]
    assert [w.level for w in warnings] == [DiagnosticLevel.WARNING]
    assert "torn" in warnings[0].message
    assert _prompts(items) == ["CORRAL_TOOL: echo hello-import", "Say something plain"]
    assert isinstance(items[-1], Emitted) and items[-1].kind == warnings[0]  # where it was
    records = _replayed(items, "gemini")
    assert isinstance(records[-1], Closed) and len(_turn_ends(records)) == 2


def test_gemini_chat_replays_into_two_closed_turns() -> None:
    records = _replayed(list(read_gemini_session(GEMINI)), "gemini")
    assert isinstance(records[-1], Closed)
    assert len(_turn_ends(records)) == 2


# ---- corral's recorded ACP wire ------------------------------------------------------------


def test_recorded_wire_reads_prompts_with_their_time_and_the_agent_s_turns() -> None:
    items = list(read_acp_wire(WIRE))
    assert _prompts(items) == ["CORRAL_TOOL: touch made.txt", "Say something plain"]
    prompts = [i for i in items if isinstance(i, PromptSent)]
    assert all(p.at_ns is not None and p.at_ns > 1_700_000_000 * 10**9 for p in prompts)
    assert not any(isinstance(i, TurnBegan) for i in items)  # the replay acknowledges prompts
    finished = [i for i in items if isinstance(i, TurnFinished)]
    assert [type(f.stop) for f in finished] == [Completed, Completed]
    (tool,) = {t.tool.id: t for t in _tools(items)}.values()
    assert tool.tool.kind is ToolKind.EXECUTE
    assert _texts(items).endswith("You said: Say something plain")


def test_recorded_wire_counts_lost_lines_and_skips_non_json_output(tmp_path: Path) -> None:
    lines = WIRE.read_bytes().splitlines()
    extra = [
        b'{"in_text": "npm warn something", "at": {"secs_since_epoch": 1, "nanos_since_epoch": 0}}',
        b'{"dropped": 3}',
    ]
    wire = tmp_path / "x.wire.jsonl"
    wire.write_bytes(b"\n".join([*lines[:3], *extra, *lines[3:]]) + b"\n")
    items = list(read_acp_wire(wire))
    notes = [i.kind for i in items if isinstance(i, Emitted) and isinstance(i.kind, Diagnostic)]
    assert len(notes) == 1 and "3 wire lines" in notes[0].message
    assert notes[0].level is DiagnosticLevel.WARNING
    assert _prompts(items) == _prompts(list(read_acp_wire(WIRE)))


def test_only_an_acp_initialize_names_a_recorded_wire() -> None:
    first, second = (orjson.loads(line) for line in WIRE.read_bytes().splitlines()[:2])
    assert recognizes_acp_wire_line(first, WIRE) and recognizes_acp_wire_line(second, WIRE)
    app_server = {
        "out": {"method": "initialize", "params": {"protocolVersion": "v1", "clientInfo": {}}}
    }
    assert not recognizes_acp_wire_line(app_server, WIRE)
    assert not recognizes_acp_wire_line({"in": {"id": 1, "result": {}}}, WIRE)


def test_recorded_wire_replays_into_two_closed_turns() -> None:
    records = _replayed(list(read_acp_wire(WIRE)), "acp")
    assert isinstance(records[-1], Closed)
    assert [type(end.stop) for end in _turn_ends(records)] == [Completed, Completed]


# ---- opencode ----------------------------------------------------------------------------


def test_opencode_export_reads_prompts_tool_calls_and_turn_ends() -> None:
    items = list(read_opencode_export(OPENCODE))
    # `opencode run "a b"` stores the prompt wrapped in double quotes: kept as opencode has it.
    assert _prompts(items) == [
        '"CORRAL_TOOL: echo hello-import"',
        '"Say something plain"',
        '"CORRAL_ECHO last"',
    ]
    (tool,) = _tools(items)
    assert tool.tool.kind is ToolKind.EXECUTE
    assert tool.tool.status is ToolStatus.COMPLETED
    assert tool.tool.input == CommandInput(command="echo hello-import")
    assert tool.tool.output == "hello-import\n"
    assert _texts(items) == (
        "Tool said: hello-importYou said: Say something plainYou said: CORRAL_ECHO last"
    )
    finished = [i for i in items if isinstance(i, TurnFinished)]
    assert [f.stop for f in finished] == [Completed()] * 3
    assert all(isinstance(i, PromptSent) and i.at_ns for i in items if isinstance(i, PromptSent))


def test_opencode_export_failed_and_aborted_messages_end_their_turns(tmp_path: Path) -> None:
    document = orjson.loads(OPENCODE.read_bytes())
    user, *_ = document["messages"]
    failed = {"role": "assistant", "error": {"name": "APIError", "data": {"message": "boom"}}}
    aborted = {"role": "assistant", "error": {"name": "MessageAbortedError", "data": {}}}
    document["messages"] = [
        user,
        {"info": failed, "parts": []},
        user,
        {"info": aborted, "parts": []},
    ]
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps(document))
    finished = [i.stop for i in read_opencode_export(export) if isinstance(i, TurnFinished)]
    assert finished == [Failed(message="boom"), Cancelled()]


def test_opencode_export_is_recognized_by_its_session_info_and_messages() -> None:
    document = orjson.loads(OPENCODE.read_bytes())
    assert recognizes_opencode_export(document, OPENCODE)
    assert not recognizes_opencode_export({"info": document["info"]}, OPENCODE)
    assert not recognizes_opencode_export({"info": {"id": "x"}, "messages": []}, OPENCODE)


def test_opencode_export_replays_into_three_closed_turns() -> None:
    records = _replayed(list(read_opencode_export(OPENCODE)), "opencode")
    assert isinstance(records[-1], Closed)
    assert [end.stop for end in _turn_ends(records)] == [Completed()] * 3
