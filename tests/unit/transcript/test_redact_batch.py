"""A batch's records searched for hints at once, and what that must never miss.

The writer searches the encodings of a batch's small records together
(`Redactor.suspects`) and checks alone only those a hint lands in. These
hold that shortcut to the per-record answer (`might_need_redaction`) and
show that a secret anywhere in a batch, or split across two, still goes.
Secret-shaped values come from `test_redact.py`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest
from corral.pipeline.events import Diagnostic, DiagnosticLevel, TextDelta, UserMessage
from corral.sinks.transcript import Redactor
from corral.sinks.transcript._patterns import CASED_HINTS
from corral.sinks.transcript._redact import (
    _FILTER,
    Redaction,
    _bytes_hinted,
    might_hold_secret,
    might_need_redaction,
)
from corral.sinks.transcript._streams import DeltaRedactor

from tests.support.schema import check_line

from .helpers import closed, event, opened, writer
from .test_redact import CASES

KNOWN = "Pr1vateSessionValue"
PLAIN = [
    "all done",
    "the tests pass",
    "usage",  # hints only in the names of plain keys (`_encodings`)
    "the token budget is fine",  # a hint, no secret
    "ACP client on SK hardware",  # a cased hint, no secret
    "line\nbreak and \u00e9t\u00e9",
]
SECRETS = [text for text, _ in CASES.values()] + [f"it is {KNOWN} here", '{"password": "pw1"}']


def _encodings(texts: list[str]) -> list[bytes]:
    usage = {"input_tokens": 12, "resume_token": "r1"}
    return [
        orjson.dumps({"message": text, "n": n, **(usage if text == "usage" or n % 3 else {})})
        for n, text in enumerate(texts)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_the_batch_search_finds_exactly_what_each_record_alone_would(seed: int) -> None:
    pick = random.Random(seed)
    texts = [pick.choice(PLAIN) for _ in range(pick.randrange(0, 300))]
    for _ in range(pick.randrange(0, 4)):
        if texts:
            texts[pick.randrange(len(texts))] = pick.choice(SECRETS)
    redactor = Redactor(known=[KNOWN])
    encoded = _encodings(texts)
    alone = [index for index, one in enumerate(encoded) if redactor.might_need_redaction(one)]
    assert redactor.suspects(encoded) == alone


@pytest.mark.parametrize("secret", SECRETS)
def test_a_secret_in_the_last_record_of_a_large_batch_is_a_suspect(secret: str) -> None:
    encoded = _encodings([*([PLAIN[0]] * 255), secret])
    assert Redactor(known=[KNOWN]).suspects(encoded) == [255]
    assert Redactor(known=[KNOWN]).suspects(encoded[:255]) == []


def test_hints_only_in_plain_keys_make_no_suspect() -> None:
    encoded = _encodings([PLAIN[2]] * 10)
    assert might_need_redaction(encoded[0]) is False
    assert Redactor().suspects(encoded) == []


@pytest.mark.parametrize("seed", range(20))
def test_the_hint_search_finds_a_hint_wherever_one_is(seed: int) -> None:
    """The filters match leftmost-longest (faster): still any hint, anywhere, is found."""
    pick = random.Random(seed)
    pieces = [*_FILTER, *CASED_HINTS, "to", "ke", "n", "sk", "-", " ", "x", "\u00e9"]
    for _ in range(200):
        text = "".join(pick.choice(pieces) for _ in range(pick.randrange(0, 12)))
        lowered = text.lower()
        expected = any(hint in lowered for hint in _FILTER) or any(h in text for h in CASED_HINTS)
        assert might_hold_secret(text) is expected, text
        assert _bytes_hinted(lowered.encode()) is any(hint in lowered for hint in _FILTER)


def _lines(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    for line in lines:
        if "event" in line:
            check_line(line)
    return lines


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_secret_in_the_last_event_of_a_batch_of_256_is_redacted(
    tmp_path: Path, name: str
) -> None:
    text, secret = CASES[name]
    path = tmp_path / "t.jsonl"
    w = writer(path)
    info = DiagnosticLevel.INFO
    batch = [event(n, Diagnostic(level=info, message=PLAIN[n % 5])) for n in range(1, 256)]
    w.write([opened(), *batch, event(256, UserMessage(message_id="u1", text=text)), closed(256)])
    lines = _lines(path)
    assert secret not in path.read_text()
    marked = [line for line in lines if "redacted" in line]
    assert [line["event"]["sequence"] for line in marked] == [256]  # type: ignore[index]
    assert lines[-1]["footer"]["redacted_records"] == 1  # type: ignore[index]


def test_a_secret_split_across_two_batches_is_redacted(tmp_path: Path) -> None:
    text, secret = CASES["anthropic_key"]
    cut = len(text) - len(secret) // 2
    path = tmp_path / "t.jsonl"
    w = writer(path)
    info = DiagnosticLevel.INFO
    first = [event(n, Diagnostic(level=info, message=PLAIN[0])) for n in range(1, 255)]
    w.write([opened(), *first, event(255, TextDelta(message_id="m1", text=text[:cut]))])
    w.write([event(256, TextDelta(message_id="m1", text=text[cut:])), closed(256)])
    _lines(path)
    written = path.read_text()
    assert not [secret[i : i + 4] for i in range(len(secret) - 3) if secret[i : i + 4] in written]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_masked_sparsely_matches_a_run_counted_per_delta(name: str) -> None:
    """What the writer uses (`masked_run`) and the per-delta form agree, counts too."""
    text, _ = CASES[name]
    pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
    runs = [["the token is "], pieces[: len(pieces) // 2], pieces[len(pieces) // 2 :], ["ok"]]
    dense, sparse = DeltaRedactor(known=(KNOWN,)), DeltaRedactor(known=(KNOWN,))
    masked_at_all = 0
    for run in runs:
        founds = [Redaction() for _ in run]
        written, masked = sparse.masked_run("m1", run)
        assert written == dense.redact_run("m1", run, founds)
        assert {place: found.counts for place, found in masked.items()} == {
            place: found.counts for place, found in enumerate(founds) if found.counts
        }
        masked_at_all += len(masked)
    assert masked_at_all
