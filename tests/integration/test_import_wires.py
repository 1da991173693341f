"""`corral import` (a real subprocess) of corral's own `--record-wire` files: Claude, Codex, Copilot.

`tests/fixtures/wire/NAME.wire.jsonl` is what a real `corral serve
--record-wire` wrote for a session of the real CLI against the mock model,
and `NAME.live.jsonl` the events that live session sent the app
(`tests/fixtures/wire/record.py`). Imported from a folder, each wire must
normalize to the live session's events again: the same kinds in the same
order, the same text, the same tool calls, the same turn ends, and the
permission request closed where the app answered it, with the app's
decision (read off corral's reply on the wire). One thing differs: the
resume token the live session knew at open comes from the wire, so Claude
Code's import has one `SessionUpdated` more. A recording of a wire no source reads back fails with
what it begins with; nothing else in the folder is held up by it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import orjson
from corral.sinks.transcript import find_transcripts, read_transcript

from tests.integration.test_import_more import corral
from tests.support.schema import check

WIRES = Path(__file__).parents[1] / "fixtures" / "wire"
FORMATS = {"claude-wire": "claude", "codex-wire": "codex", "copilot-wire": "copilot-native"}
LEARNED = frozenset({"SessionUpdated"})


def _name(event: dict[str, Any]) -> str:
    kind = event["kind"]
    return kind if isinstance(kind, str) else next(iter(kind))


def _payloads(events: list[dict[str, Any]], name: str) -> list[Any]:
    return [event["kind"][name] for event in events if _name(event) == name]


def _tools(events: list[dict[str, Any]]) -> list[tuple[str, str, str, object]]:
    return [
        (tool["id"], tool["kind"], tool["status"], tool.get("input"))
        for tool in _payloads(events, "ToolUpdated")
    ]


def _decisions(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    marks = [e["extensions"]["corral/decision"] for e in events if _name(e) == "RequestClosed"]
    return [(mark["decision"], mark["decided_by"]) for mark in marks]


def _same_session(live: list[dict[str, Any]], imported: list[dict[str, Any]]) -> None:
    assert [_name(e) for e in imported if _name(e) not in LEARNED] == [
        _name(e) for e in live if _name(e) not in LEARNED
    ]
    for name in ("TextDelta", "TurnEnded", "MessageEnded", "RequestOpened", "RequestClosed"):
        assert _payloads(imported, name) == _payloads(live, name), name
    assert _payloads(imported, "StatusChanged") == _payloads(live, "StatusChanged")
    assert _tools(imported) == _tools(live)
    assert _decisions(imported) == _decisions(live) == [("allow_once", "app")]


def test_corral_import_of_recorded_wires_gives_the_live_sessions_events(tmp_path: Path) -> None:
    folder = tmp_path / "wires"
    folder.mkdir()
    for name in FORMATS.values():
        shutil.copy(WIRES / f"{name}.wire.jsonl", folder / f"{name}.wire.jsonl")
    unknown = {"out": {"jsonrpc": "2.0", "id": 1, "method": "hello"}, "at": {}}
    (folder / "other.wire.jsonl").write_bytes(orjson.dumps(unknown) + b"\n")
    home, archive = tmp_path / "home", str(tmp_path / "archive")

    done = corral(home, "import", str(folder), "--transcripts", archive)
    assert done.returncode == 1, done.stderr  # a file failed
    assert done.stdout.startswith("imported 3, skipped 0, failed 1"), done.stdout
    assert re.search(
        r"failed\s+\S*other\.wire\.jsonl: a corral wire recording \(--record-wire\) of a wire "
        r"corral cannot read back \(first out message: method 'hello'\)",
        done.stdout,
    ), done.stdout

    imported = {}
    for files in find_transcripts(Path(archive)):
        read = read_transcript(files)
        assert read.header is not None and read.problems == []
        events = [event.to_wire() for event in read.events()]
        for event in events:
            check("line-protocol.schema.json", "Event", event)
        imported[read.header.agent] = events
    assert set(imported) == set(FORMATS)
    for format_id, name in FORMATS.items():
        live = [
            orjson.loads(line) for line in (WIRES / f"{name}.live.jsonl").read_bytes().splitlines()
        ]
        _same_session(live, imported[format_id])
