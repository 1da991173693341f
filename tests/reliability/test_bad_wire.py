"""A source fed malformed lines, invalid UTF-8, a 64 MiB line, U+2028 inside
strings and a last line without a newline: every good event arrives, every bad
line is reported in its place, nothing is lost, the session goes on."""

from __future__ import annotations

from typing import Any

from corral.pipeline.events import Diagnostic, TextDelta, TurnEnded

from .helpers import END, run_turns, text


def texts(events: list[Any]) -> list[str]:
    return [e.kind.text for e in events if isinstance(e.kind, TextDelta)]


def problems(events: list[Any]) -> list[str]:
    return [
        e.extensions.get("corral/decode_error") or e.extensions.get("corral/unknown_frame")
        for e in events
        if isinstance(e.kind, Diagnostic)
    ]


async def test_bad_lines_are_reported_in_place_and_the_turn_goes_on() -> None:
    events, session = await run_turns(
        [
            [
                text("one"),
                {"Raw": "this is not json\n"},
                text("two"),
                {"RawBytes": "eyJhIjoiXP8ifQo="},  # {"a":"\xff"} + newline: invalid UTF-8
                text("three"),
                {"Raw": '{"NotAnEvent": 1}\n'},
                text("four"),
                END,
            ]
        ]
    )
    assert texts(events) == ["one", "two", "three", "four"]
    assert problems(events) == ["not_json", "not_json", "NotAnEvent"]
    names = [type(e.kind).__name__ for e in events]
    assert names.index("Diagnostic") < names.index("TurnEnded")
    assert session.failure is None


async def test_a_64_mib_line_is_skipped_without_holding_it() -> None:
    events, session = await run_turns(
        [[text("before"), {"Flood": 64 * 1024 * 1024}, text("after"), END]]
    )
    assert texts(events) == ["before", "after"]
    assert problems(events) == ["oversized"]
    assert "67108864 bytes" in next(
        e.kind.message for e in events if isinstance(e.kind, Diagnostic)
    )
    assert session.failure is None


async def test_u2028_and_u2029_inside_strings_are_not_line_breaks() -> None:
    odd = "line\u2028separator\u2029paragraph\x85next"
    events, _ = await run_turns([[text(odd), END]])
    assert texts(events) == [odd]
    assert not problems(events)


async def test_a_last_line_without_newline_before_exit_is_still_read() -> None:
    last = '{"Emitted": {"kind": {"TextDelta": {"message_id": "m1", "text": "tail"}}, "parent_tool_id": null}}'
    events, session = await run_turns([[text("head"), {"Raw": last}, {"Exit": 3}]])
    assert texts(events) == ["head", "tail"]
    ended = [e.kind for e in events if isinstance(e.kind, TurnEnded)]
    assert "Failed" in str(ended[0].stop)
    assert session.failure.fields["status"] == "3"
