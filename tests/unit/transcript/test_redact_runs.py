"""Redaction of a stream where a harmless hint word recurs, delta by delta and in runs.

A writer hands a batch's deltas of a stream to the redactor together
(`DeltaRedactor.redact_run`), so prose that keeps saying "token" is searched
once per batch rather than once per delta. These are the attacks on that
shortcut: a secret right after many hints, split at every position, with
batch boundaries anywhere. Secret-shaped values come from `test_redact.py`.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from corral.pipeline.events import MessageEnded, TextDelta
from corral.sinks.transcript._redact import Redaction
from corral.sinks.transcript._streams import DeltaRedactor

from tests.support.schema import check_line

from .helpers import closed, event, opened, writer
from .test_redact import CASES

HINTS = "the token, the key and the password " * 12  # every delta after this holds a hint
TAIL = " and that is all"


def _survives(secret: str, written: str) -> list[str]:
    return [secret[i : i + 4] for i in range(len(secret) - 3) if secret[i : i + 4] in written]


def _deltas(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _in_runs(pieces: list[str], cuts: list[int]) -> tuple[str, int]:
    """The pieces redacted as runs split before each index in `cuts`; the text, the count."""
    deltas = DeltaRedactor()
    found = 0
    written: list[str] = []
    for first, last in zip([0, *cuts], [*cuts, len(pieces)], strict=True):
        run = pieces[first:last]
        founds = [Redaction() for _ in run]
        written += deltas.redact_run("m1", run, founds)
        found += sum(f.total for f in founds)
    return "".join(written), found


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 3, 6])
def test_a_secret_right_after_many_hints_never_survives(name: str, size: int) -> None:
    text, secret = CASES[name]
    streamed = HINTS + text + TAIL
    deltas = DeltaRedactor()
    found = Redaction()
    written = "".join(deltas.redact("m1", piece, found) for piece in _deltas(streamed, size))
    assert not _survives(secret, written), (name, size, written[-120:])
    assert found.total >= 1
    assert written.startswith(HINTS) and written.endswith(TAIL[-size:])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_secret_split_at_every_position_after_hints_never_survives(name: str) -> None:
    text, secret = CASES[name]
    streamed = HINTS + text + TAIL
    start = streamed.index(secret)
    for cut in range(start - 8, start + len(secret)):
        pieces = [streamed[:cut], streamed[cut:]]
        for cuts in ([], [1]):  # one run of both deltas, and a run each
            written, found = _in_runs(pieces, cuts)
            assert not _survives(secret, written), (name, cut, cuts, written[-120:])
            assert found >= 1 and written.endswith(TAIL)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 4])
def test_a_run_boundary_anywhere_in_a_secret_never_lets_it_through(name: str, size: int) -> None:
    text, secret = CASES[name]
    pieces = _deltas(HINTS + text + TAIL, size)
    first = len(HINTS) // size
    last = (len(HINTS) + len(text)) // size + 1
    for boundary in range(first, last + 1):
        written, found = _in_runs(pieces, [first // 2, boundary])
        assert not _survives(secret, written), (name, size, boundary, written[-120:])
        assert found >= 1


def test_a_run_counts_each_delta_s_masks_in_its_own_record() -> None:
    text, secret = CASES["anthropic_key"]
    cut = text.index(secret) + 5
    founds = [Redaction(), Redaction(), Redaction()]
    written = DeltaRedactor().redact_run("m1", [HINTS, text[:cut], text[cut:]], founds)
    assert written[0] == HINTS and founds[0].total == 0
    assert "[REDACTED:anthropic_key]" in written[1] and "[REDACTED:anthropic_key]" in written[2]
    assert founds[1].counts == founds[2].counts == {"anthropic_key": 1}


def test_a_partial_at_a_run_s_end_is_masked_until_the_next_run_shows_the_rest() -> None:
    deltas = DeltaRedactor()
    start = "sk-" + "ant-api03-AbCd"
    first = deltas.redact_run("m1", [HINTS, "key " + start], [Redaction(), Redaction()])
    assert "AbCd" not in first[1]
    rest = deltas.redact_run("m1", ["EfGhIjKlMnOpQrStUv ok"], [Redaction()])
    assert "EfGh" not in rest[0] and rest[0].endswith(" ok")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_written_batch_of_hinted_deltas_keeps_no_secret(tmp_path: Path, name: str) -> None:
    """Through the writer: one batch, a stream's deltas one character each, ended midway."""
    text, secret = CASES[name]
    streamed = HINTS + text + TAIL
    records: list[object] = [opened()]
    for sequence, char in enumerate(streamed, 1):
        records.append(event(sequence, TextDelta(message_id="m1", text=char)))
    records.append(event(len(streamed) + 1, MessageEnded("m1")))
    again = [
        event(len(records) + i, TextDelta(message_id="m1", text=c)) for i, c in enumerate(text)
    ]
    path = tmp_path / "t.jsonl"
    transcript = writer(path)
    transcript.write([*records, *again, closed(len(records) + len(again))])  # type: ignore[list-item]
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    events = [line["event"] for line in lines if "event" in line]
    for line in events:
        check_line({"event": line})
    said = "".join(e["kind"]["TextDelta"]["text"] for e in events if "TextDelta" in e["kind"])
    assert not _survives(secret, said), (name, said[-200:])
    assert said.startswith(HINTS) and TAIL in said
    assert transcript.counts.redactions >= 2  # before the end of the message and after it
