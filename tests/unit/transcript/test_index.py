"""The SQLite index: summaries, full-text search, incremental updates, repair on reopen."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.events import (
    Completed,
    ContextUsage,
    MessageEnded,
    PromptOrigin,
    TextDelta,
    TurnEnded,
    TurnStarted,
)
from corral.sinks.transcript import TranscriptIndex, read_transcript
from corral.sinks.transcript._paths import files_of

from .helpers import closed, event, opened, turn, writer


def _session(root: Path, name: str, text: str, *, finish: bool = True) -> Path:
    path = root / "2025-06-01" / f"{name}.jsonl"
    transcript = writer(path)
    usage = event(7, ContextUsage(used_tokens=50, cost_usd=0.5),
                  **{"corral/tokens": {"input": 30, "output": 12}})  # fmt: skip
    transcript.write([opened(), *turn(1, text), usage])
    if finish:
        transcript.write([closed(7)])
    else:
        transcript.abandon()
    return path


def test_search_finds_a_word_split_over_deltas_and_names_where(tmp_path: Path) -> None:
    events = [
        event(1, TurnStarted(PromptOrigin("p1"))),
        event(2, TextDelta(message_id="m1", text="the walrus")),
        event(3, TextDelta(message_id="m1", text="es sing")),
        event(4, MessageEnded("m1")),
        event(5, TurnEnded(stop=Completed())),
    ]
    writer(tmp_path / "t.jsonl").write([opened(), *events, closed(5)])
    with TranscriptIndex(tmp_path) as index:
        index.update()
        (hit,) = index.search("walruses sing")
    assert hit.transcript_id == "t" and hit.sequence == 2 and hit.role == "assistant"
    assert "[walruses]" in hit.snippet and "[sing]" in hit.snippet


def test_summaries_carry_the_list_columns(tmp_path: Path) -> None:
    _session(tmp_path, "a", "alpha")
    with TranscriptIndex(tmp_path) as index:
        index.update()
        (row,) = index.summaries()
    assert (row.transcript_id, row.agent, row.session, row.turns, row.events) == (
        "a",
        "mock",
        "s1",
        1,
        7,
    )
    assert (row.tokens, row.cost_usd, row.status, row.problems) == (42, 0.5, "closed", 0)


@pytest.mark.parametrize(
    ("reported", "tokens"),
    [
        ({"corral/tokens": {"input": 30, "output": 12}}, 42 + 7),  # the sum over the turns
        ({}, 900),  # only how full the context is: the largest used_tokens
    ],
)
def test_the_footer_and_the_list_count_the_same_tokens(
    tmp_path: Path, reported: dict[str, object], tokens: int
) -> None:
    second = {"corral/tokens": {"input": 5, "output": 2}} if reported else {}
    usage = [
        event(7, ContextUsage(used_tokens=900, cost_usd=0.25), **reported),
        event(8, ContextUsage(used_tokens=400, cost_usd=0.5), **second),
    ]
    path = tmp_path / "t.jsonl"
    writer(path).write([opened(), *turn(1, "alpha"), *usage, closed(8)])
    footer = read_transcript(files_of(path)).footer
    with TranscriptIndex(tmp_path) as index:
        index.update()
        (row,) = index.summaries()
    assert footer is not None
    assert footer.count("tokens") == row.tokens == tokens
    assert footer.raw["cost_usd"] == row.cost_usd == 0.75


def test_only_changed_transcripts_are_read_again(tmp_path: Path) -> None:
    _session(tmp_path, "a", "alpha")
    _session(tmp_path, "b", "beta")
    with TranscriptIndex(tmp_path) as index:
        first = index.update()
        second = index.update()
        _session(tmp_path, "c", "gamma")
        third = index.update()
        assert [hit.transcript_id for hit in index.search("gamma")] == ["c"]
    assert (first.indexed, second.indexed, second.unchanged) == (2, 0, 2)
    assert (third.indexed, third.unchanged) == (1, 2)


def test_a_removed_transcript_leaves_the_index(tmp_path: Path) -> None:
    path = _session(tmp_path, "a", "alpha")
    with TranscriptIndex(tmp_path) as index:
        index.update()
        path.unlink()
        assert index.update().removed == 1
        assert list(index.search("alpha")) == [] and index.summaries() == []


def test_reopening_repairs_an_unfinished_transcript(tmp_path: Path) -> None:
    path = _session(tmp_path, "a", "alpha", finish=False)
    with path.open("ab") as file:
        file.write(b'{"event": {"sequ')
    with TranscriptIndex(tmp_path) as index:
        update = index.update()
        (row,) = index.summaries()
    assert update.repaired == ["a"]
    assert row.status == "interrupted" and row.events == 7
    read = read_transcript(files_of(path))
    assert read.torn_lines_cut == 1 and read.torn_bytes == 0


def test_an_id_resolves_by_prefix_or_part(tmp_path: Path) -> None:
    _session(tmp_path, "20250601-mock-s1-abc", "alpha")
    _session(tmp_path, "20250601-mock-s2-def", "beta")
    with TranscriptIndex(tmp_path) as index:
        index.update()
        assert index.resolve("20250601-mock-s1") == ["20250601-mock-s1-abc"]
        assert index.resolve("def") == ["20250601-mock-s2-def"]
        assert len(index.resolve("20250601")) == 2
        assert index.resolve("nothing") == []


def test_search_text_is_never_fts_syntax(tmp_path: Path) -> None:
    _session(tmp_path, "a", 'alpha "quoted" NEAR(x) OR -minus')
    with TranscriptIndex(tmp_path) as index:
        index.update()
        assert [h.transcript_id for h in index.search('"quoted" NEAR(x)')] == ["a"]
        assert list(index.search("   ")) == []
