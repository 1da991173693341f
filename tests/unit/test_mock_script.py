"""The mock script format: what reads, and the errors that say what is wrong."""

from __future__ import annotations

from importlib import resources

import orjson
import pytest
from corral.pipeline.driver import Emitted, TokenCount
from corral.pipeline.events import Cancelled, ContextUsage, ShapeError, TextDelta
from corral.sources.mock import load_script, parse_script
from corral.sources.mock._script import AwaitAnswer, Die, Emit, End, Repeat, Sleep
from corral.sources.mock._wire import decode_event, encode_event


def test_an_empty_script_is_valid_and_asks_permission_by_default() -> None:
    script = parse_script({})
    assert script.turns == () and script.permissions and script.deterministic
    assert not (script.steer or script.steer_rejects or script.compact or script.resume)
    assert not (script.ignore_cancel or script.ignore_close)


def test_every_step_kind_reads() -> None:
    script = parse_script(
        {
            "turns": [
                [
                    {"Emit": {"TextDelta": {"message_id": "m", "text": "t"}}},
                    "AwaitAnswer",
                    {"Sleep": 250},
                    {"Repeat": {"times": 3, "steps": ["Die"]}},
                    {"Usage": {"used_tokens": 7, "cost_usd": 0.5}},
                    {"End": "Cancelled"},
                ]
            ]
        }
    )
    assert script.turns[0] == (
        Emit(TextDelta(message_id="m", text="t")),
        AwaitAnswer(),
        Sleep(0.25),
        Repeat(times=3, steps=(Die(),)),
        Emit(ContextUsage(used_tokens=7, cost_usd=0.5)),
        End(Cancelled()),
    )


def test_every_flag_reads_with_its_non_default_value() -> None:
    script = parse_script(
        {
            "steer": True,
            "steer_rejects": True,
            "compact": True,
            "permissions": False,
            "resume": True,
            "deterministic": False,
            "ignore_cancel": True,
            "ignore_close": True,
        }
    )
    assert (script.steer, script.steer_rejects, script.compact, script.resume) == (
        True,
        True,
        True,
        True,
    )
    assert not script.permissions and not script.deterministic
    assert script.ignore_cancel and script.ignore_close


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"turns": [["Jump"]]}, "script.turns[0][0]: unknown variant 'Jump'"),
        ({"turns": [[{"Emit": {"TurnStarted": {"origin": "Agent"}}}]]}, "belongs to the engine"),
        ({"turns": [[{"Sleep": "soon"}]]}, "Sleep: expected an integer"),
        ({"turns": [[{"Emit": {"TextDelta": {"text": "t"}}}]]}, "message_id: missing"),
        ({"rollback": "maybe"}, "rollback"),
        ({"compact": "yes"}, "script.compact: expected a boolean"),
        ({"turns": {}}, "expected an array"),
        ({"on_open": ["Jump"]}, "script.on_open[0]: unknown variant 'Jump'"),
        ({"process": True, "on_open": ["Die"]}, "in-process only"),
    ],
)
def test_a_bad_script_names_the_place_and_the_problem(raw: object, needle: str) -> None:
    with pytest.raises(ShapeError) as raised:
        parse_script(raw)
    assert needle in str(raised.value)


def test_on_open_steps_read_in_order() -> None:
    script = parse_script(
        {"on_open": [{"Sleep": 5}, {"End": {"Completed": {"source": "Protocol"}}}]}
    )
    assert [type(step) for step in script.on_open] == [Sleep, End]
    assert parse_script({}).on_open == ()


def test_every_shipped_script_reads() -> None:
    scripts = resources.files("corral.sources").joinpath("mock/scripts")
    names = sorted(entry.name for entry in scripts.iterdir() if entry.name.endswith(".json"))
    assert {"coder.json", "tester.json", "reviewer.json", "crash.json", "big-turn.json"} <= set(
        names
    )
    for name in names:
        with resources.as_file(scripts.joinpath(name)) as path:
            load_script(path)


def test_usage_tokens_and_model_ride_as_typed_fields_and_an_unknown_kind_is_refused() -> None:
    usage = {"used_tokens": 9, "tokens": {"input": 4, "reasoning": 1}, "model": "m1"}
    [[step]] = parse_script({"turns": [[{"Usage": usage}]]}).turns
    assert isinstance(step, Emit)
    assert (step.tokens, step.model) == (TokenCount(input=4, reasoning=1), "m1")
    assert step.extensions == {}
    with pytest.raises(ShapeError, match="no token kind 'wishes'"):
        parse_script({"turns": [[{"Usage": {"used_tokens": 1, "tokens": {"wishes": 3}}}]]})


def test_the_mock_process_wire_carries_tokens_and_model() -> None:
    usage = Emitted(kind=ContextUsage(used_tokens=9), tokens=TokenCount(output=2), model="m1")
    assert decode_event(orjson.loads(orjson.dumps(encode_event(usage)))) == usage
