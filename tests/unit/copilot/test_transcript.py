"""Copilot `events.jsonl` transcripts through the replay reader, against golden files.

The scenario files under `tests/fixtures/copilot/sessions/` are
hand-written SessionEvents (each checked against the seed schema in
`test_fixtures.py`); together they use every event type the normalizer
maps. Each is read whole, byte by byte, and with a torn last line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.driver import Emitted, PromptSent, TurnBegan, TurnFinished
from corral.pipeline.events import Completed, Diagnostic, DiagnosticLevel, TextDelta
from corral.sources.copilot import TranscriptDecoder, read_native_transcript

from tests.unit.copilot.golden import assert_golden, check_items

FIXTURES = Path(__file__).parents[2] / "fixtures" / "copilot"
SCENARIOS = sorted((FIXTURES / "sessions").glob("*.jsonl"))


def decode_bytewise(data: bytes) -> list[object]:
    decoder = TranscriptDecoder()
    items: list[object] = []
    for index in range(len(data)):
        items.extend(decoder.feed(data[index : index + 1]))
    items.extend(decoder.end())
    return items


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_a_transcript_replays_as_its_golden_file(scenario: Path) -> None:
    items = list(read_native_transcript(scenario))
    check_items(items)
    assert_golden(FIXTURES / "expected" / f"{scenario.stem}.json", items)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_a_transcript_fed_byte_by_byte_replays_the_same(scenario: Path) -> None:
    data = scenario.read_bytes()
    assert decode_bytewise(data) == list(read_native_transcript(scenario))


def test_a_torn_last_line_becomes_one_warning_after_everything_before_it(tmp_path: Path) -> None:
    whole = (FIXTURES / "sessions" / "text_turn.jsonl").read_bytes()
    torn = tmp_path / "events.jsonl"
    torn.write_bytes(whole + b'{"type":"assistant.message_delta","data":{"messageId":"m9","del')
    items = list(read_native_transcript(torn))
    expected = list(read_native_transcript(FIXTURES / "sessions" / "text_turn.jsonl"))
    warnings = [i for i in items if isinstance(i, Emitted) and isinstance(i.kind, Diagnostic)]
    assert [w.extensions["corral/decode_error"] for w in warnings] == ["torn"]
    assert warnings[0].kind.level is DiagnosticLevel.WARNING
    assert [i for i in items if i not in warnings] == expected


def test_raw_u2028_inside_strings_stays_inside_its_event() -> None:
    items = list(read_native_transcript(FIXTURES / "sessions" / "text_turn.jsonl"))
    prompts = [i.text for i in items if isinstance(i, PromptSent)]
    texts = [i.kind.text for i in items if isinstance(i, Emitted) and isinstance(i.kind, TextDelta)]
    assert prompts[0] == "Say hello\u2028twice"
    assert "".join(texts).startswith("Hello twice\u2028!")


def test_a_prompt_turn_ends_before_the_next_prompt_and_at_the_end_of_the_file() -> None:
    items = list(read_native_transcript(FIXTURES / "sessions" / "tools.jsonl"))
    markers = [i for i in items if isinstance(i, PromptSent | TurnBegan | TurnFinished)]
    assert [type(m).__name__ for m in markers] == ["PromptSent", "TurnBegan", "TurnFinished"]
    assert markers[-1] == TurnFinished(stop=Completed())


def test_a_prompt_carries_its_timestamp() -> None:
    items = list(read_native_transcript(FIXTURES / "sessions" / "tools.jsonl"))
    prompt = next(i for i in items if isinstance(i, PromptSent))
    assert prompt.at_ns == 1_795_953_601_000_000_000  # 2026-11-29T12:00:01Z


def test_a_line_that_is_not_json_is_a_warning_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"not json\n" + (FIXTURES / "sessions" / "tools.jsonl").read_bytes())
    items = list(read_native_transcript(path))
    first = items[0]
    assert isinstance(first, Emitted) and first.problem == "not_json"
    assert items[1:] == list(read_native_transcript(FIXTURES / "sessions" / "tools.jsonl"))
