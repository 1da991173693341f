"""A real Copilot 1.0.102 `events.jsonl`, recorded through corral, replayed.

`tests/fixtures/copilot/real/copilot-1.0.102.events.jsonl` is the
transcript Copilot itself wrote for a corral session against the mock
model (three prompts: a plain answer, an approved shell command, a
question), with the sandbox path replaced by `/sandbox`. It holds what the
seed schema does not (newer fields, `session.usage_record`), so it is
checked against its golden file, not against the schema.
"""

from __future__ import annotations

from pathlib import Path

from corral.pipeline.driver import Emitted, PromptSent, TurnFinished
from corral.pipeline.events import Completed, ContextUsage, ToolStatus, ToolUpdated
from corral.sources.copilot import read_native_transcript

from tests.unit.copilot.golden import assert_golden, check_items

FIXTURES = Path(__file__).parents[2] / "fixtures" / "copilot"
REAL = FIXTURES / "real" / "copilot-1.0.102.events.jsonl"


def test_the_real_transcript_replays_as_its_golden_file() -> None:
    items = list(read_native_transcript(REAL))
    check_items(items)
    assert_golden(FIXTURES / "expected" / "real-copilot-1.0.102.json", items)


def test_each_prompt_of_the_real_transcript_is_one_completed_turn() -> None:
    items = list(read_native_transcript(REAL))
    prompts = [i.text for i in items if isinstance(i, PromptSent)]
    ends = [i for i in items if isinstance(i, TurnFinished)]
    assert prompts == [
        "CORRAL_ECHO hello",
        "CORRAL_TOOL: touch recorded",
        "CORRAL_ASK: Keep going?",
    ]
    assert ends == [TurnFinished(stop=Completed())] * 3


def test_the_real_transcript_keeps_tools_and_token_usage() -> None:
    items = [i for i in read_native_transcript(REAL) if isinstance(i, Emitted)]
    finished = [i.kind.tool for i in items if isinstance(i.kind, ToolUpdated)]
    assert {tool.status for tool in finished} >= {ToolStatus.COMPLETED}
    usage = [i for i in items if isinstance(i.kind, ContextUsage)]
    calls = [u for u in usage if "copilot/shutdown" not in u.extensions]  # not the summary
    assert calls and all(u.tokens is not None for u in calls)
