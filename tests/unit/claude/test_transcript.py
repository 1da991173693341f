"""Claude Code's own transcripts (recorded by the real CLI), read as a replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.driver import Emitted, PromptSent, TurnBegan, TurnFinished
from corral.pipeline.events import (
    AgentOrigin,
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Event,
    PromptOrigin,
    QuestionRequest,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from corral.sources.claude import read_native_transcript

from tests.support.schema import check
from tests.unit.claude.support import FIXTURES, check_produced

TRANSCRIPTS = FIXTURES / "transcripts"


def items(name: str) -> list[object]:
    return list(read_native_transcript(TRANSCRIPTS / f"{name}.jsonl"))


def test_each_prompt_is_sent_and_its_turn_ends_where_the_file_says() -> None:
    read = items("cancel")
    prompts = [i for i in read if isinstance(i, PromptSent)]
    assert [p.text for p in prompts] == ["CORRAL_SLOW:30", "CORRAL_ECHO after"]
    assert not any(isinstance(i, TurnBegan) for i in read)  # the replay acknowledges prompts
    ends = [i.stop for i in read if isinstance(i, TurnFinished)]
    assert ends == [Cancelled(), Completed()]  # the interruption marker cancels the first


def test_prompt_carries_its_timestamp_in_nanoseconds() -> None:
    (prompt, *_) = [i for i in items("write_file") if isinstance(i, PromptSent)]
    assert prompt.at_ns is not None and prompt.at_ns % 1_000_000 == 0
    assert prompt.at_ns > 1_700_000_000 * 10**9


def test_write_tool_runs_and_completes_with_its_diff() -> None:
    updates = [
        i.kind
        for i in items("write_file")
        if isinstance(i, Emitted) and isinstance(i.kind, ToolUpdated)
    ]
    running, done = updates
    assert running.tool.kind is ToolKind.EDIT and running.tool.status is ToolStatus.RUNNING
    assert done.tool.status is ToolStatus.COMPLETED
    assert done.tool.diffs[0].new_text == "hello world\n"


def test_whole_assistant_text_is_one_delta_per_block() -> None:
    texts = [
        i.kind.text
        for i in items("question")
        if isinstance(i, Emitted) and isinstance(i.kind, TextDelta)
    ]
    assert len(texts) == 1 and '"Proceed?"="Yes"' in texts[0]


def test_compact_while_idle_is_a_turn_of_its_own_and_drops_the_usage() -> None:
    read = items("compact")
    began = read.index(TurnBegan())
    assert isinstance(read[began + 1], Emitted) and read[began + 1].kind == ContextCompacted()
    *_, usage, end = read
    assert isinstance(usage, Emitted) and isinstance(usage.kind, ContextUsage)
    assert usage.kind.used_tokens == 2673
    assert end == TurnFinished(stop=Completed())


def test_compaction_is_replayed_and_its_summary_is_not_a_prompt() -> None:
    read = items("compact")
    assert [i.text for i in read if isinstance(i, PromptSent)] == ["CORRAL_ECHO before"]
    assert any(isinstance(i, Emitted) and isinstance(i.kind, ContextCompacted) for i in read)
    summaries = [i.kind for i in read if isinstance(i, Emitted) and isinstance(i.kind, UserMessage)]
    assert len(summaries) == 1 and summaries[0].text.startswith("This session is being continued")


def test_every_item_is_valid_on_the_line_protocol() -> None:
    for name in ("write_file", "cancel", "question", "compact"):
        check_produced(i for i in items(name) if not isinstance(i, PromptSent))  # type: ignore[misc]


def replayed(name: str) -> list[Event]:
    """Events of the archive's replay (actors/replay) of one transcript, schema-checked."""
    replay = pytest.importorskip("corral.actors.replay")
    session = replay.ReplaySession(
        session_id="s1", agent=replay.imported_installation("claude"), started_ns=0
    )
    events = [r for r in replay.replay(items(name), session=session) if isinstance(r, Event)]
    for event in events:
        check("line-protocol.schema.json", "Event", event.to_wire())
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    return events


def test_replay_gives_the_prompted_turns_in_order() -> None:
    events = replayed("cancel")
    started = [e.kind for e in events if isinstance(e.kind, TurnStarted)]
    assert started == [TurnStarted(PromptOrigin("p1")), TurnStarted(PromptOrigin("p2"))]
    ended = [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]
    assert ended == [Cancelled(), Completed()]


def test_replay_of_a_compaction_is_an_agent_turn() -> None:
    events = replayed("compact")
    origins = [e.kind.origin for e in events if isinstance(e.kind, TurnStarted)]
    assert origins == [PromptOrigin("p1"), AgentOrigin()]
    ended = [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]
    assert ended == [Completed(), Completed()]


def test_replay_of_a_tool_turn_keeps_the_tool_inside_the_turn() -> None:
    events = replayed("write_file")
    tools = [e for e in events if isinstance(e.kind, ToolUpdated)]
    assert tools and all(e.turn_info is not None for e in tools)


def test_a_line_that_is_not_json_is_a_warning_and_reading_goes_on(tmp_path: Path) -> None:
    source = (TRANSCRIPTS / "question.jsonl").read_bytes()
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"{torn line\n" + source)
    read = list(read_native_transcript(broken))
    first = read[0]
    assert isinstance(first, Emitted) and isinstance(first.kind, Diagnostic)
    assert first.kind.level is DiagnosticLevel.WARNING
    assert [i.text for i in read if isinstance(i, PromptSent)] == ["CORRAL_ASK: Proceed?"]


def test_question_tool_in_a_transcript_is_a_tool_not_a_request() -> None:
    read = items("question")
    assert not any(isinstance(i, QuestionRequest) for i in read)
