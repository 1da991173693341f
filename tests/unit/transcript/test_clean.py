"""Large records found clean once are not walked again; anything else still is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corral.pipeline.events import Diagnostic, DiagnosticLevel
from corral.sinks.transcript import _redact
from corral.sinks.transcript._clean import KnownClean

from .helpers import closed, event, opened, writer

# Long enough to be remembered; "token" makes the quick check send it to the walk.
ADVICE = "Commands: /cost shows token counting for the session. " * 30
SECRET = "export MY_SERVICE_" + "TOKEN=" + "hunter2hunter2"


def _diagnostic(sequence: int, message: str) -> object:
    return event(sequence, Diagnostic(level=DiagnosticLevel.INFO, message=message), turn=None)


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    walked: list[object] = []
    original = _redact.Redactor.redact

    def counting(self: _redact.Redactor, value: object, found: object = None) -> object:
        walked.append(value)
        return original(self, value, found)  # type: ignore[arg-type]

    monkeypatch.setattr(_redact.Redactor, "redact", counting)
    return walked


def test_a_repeated_large_clean_record_is_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    w = writer(path)
    w.write([opened()])
    walked = _walks(monkeypatch)
    w.write([_diagnostic(n, ADVICE) for n in range(1, 6)])
    w.write([closed(5)])
    assert len([v for v in walked if "event" in v]) == 1  # type: ignore[operator]
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    messages = [line["event"]["kind"]["Diagnostic"]["message"] for line in lines if "event" in line]
    assert messages == [ADVICE] * 5
    assert [line["event"]["sequence"] for line in lines if "event" in line] == [1, 2, 3, 4, 5]


def test_a_repeated_large_record_with_a_secret_is_redacted_every_time(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = writer(path)
    w.write([opened(), *[_diagnostic(n, ADVICE + SECRET) for n in range(1, 4)], closed(3)])
    text = path.read_text()
    assert "hunter2" not in text
    assert text.count("[REDACTED:secret_env]") == 3
    assert json.loads(text.splitlines()[-1])["footer"]["redactions"] == 3


def test_small_records_and_suspect_envelopes_are_never_answered_from_memory() -> None:
    clean = KnownClean()
    small = b'{"sequence":1,"kind":{"Diagnostic":{"message":"token"}},"extensions":{}}'
    clean.remember(small)
    assert not clean.holds(small)
    payload = b'"kind":{"Diagnostic":{"message":"' + ADVICE.encode() + b'"}},"extensions":{}}'
    clean.remember(b'{"sequence":1,"session_id":"s1",' + payload)
    assert clean.holds(b'{"sequence":2,"session_id":"s1",' + payload)
    assert not clean.holds(b'{"sequence":2,"session_id":"' + b"sk-" + b'ant-x",' + payload)
    assert not clean.holds(
        b'{"sequence":2,"session_id":"s1",' + payload.replace(b"/cost", b"/kost")
    )


def test_memory_is_bounded_oldest_first() -> None:
    clean = KnownClean()
    records = [
        b'{"sequence":1,"kind":{"Diagnostic":{"message":"' + f"{n} {ADVICE}".encode() + b'"}}}'
        for n in range(40)
    ]
    for record in records:
        clean.remember(record)
    assert not clean.holds(records[0])
    assert clean.holds(records[-1])


def test_memory_is_bounded_in_bytes_too() -> None:
    clean = KnownClean()
    huge = b'{"sequence":1,"kind":{"Diagnostic":{"message":"' + b"x" * 70_000 + b'"}}}'
    clean.remember(huge)
    assert not clean.holds(huge)  # larger than the whole budget: searched each time
    records = [
        b'{"sequence":1,"kind":{"Diagnostic":{"message":"' + f"{n} ".encode() + b"y" * 20_000
        for n in range(4)
    ]
    for record in records:
        clean.remember(record)
    assert [clean.holds(record) for record in records] == [False, True, True, True]
