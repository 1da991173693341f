"""The Claude protocol's fast paths read what their general paths read.

A fast path skips work a common frame does not need; these tests hold it
to the general path's result, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import pytest
from corral.pipeline.driver import Emitted, TurnBegan
from corral.pipeline.events import TextDelta
from corral.sources.claude._content import Content
from corral.sources.claude._core import ProtocolCore, Turn

_OURS = "prompt-1"
_FRAMES: list[dict[str, Any]] = [
    {},
    {"user_message_uuid": _OURS},
    {"user_message_uuid": "other"},
    {"user_message_uuids": [_OURS]},
    {"user_message_uuids": ["other", _OURS], "user_message_uuid": "other"},
    {"user_message_uuids": ["other"]},
    {"user_message_uuids": _OURS},  # not a list: not a mention
    {"user_message_uuids": None, "user_message_uuid": None},
]


@pytest.mark.parametrize("frame", _FRAMES)
def test_a_frame_begins_the_turn_when_it_mentions_the_prompt(frame: dict[str, Any]) -> None:
    core = ProtocolCore()
    core._turn = Turn(_OURS)
    mentioned = _OURS in core._mentions(frame)
    assert core._begun_by(frame) == ([TurnBegan()] if mentioned else [])
    assert core._turn.begun is mentioned
    assert core._begun_by(frame) == []  # a turn begins once


@pytest.mark.parametrize("parent", [None, "task-1"])
def test_a_text_delta_is_the_same_event_on_either_path(parent: str | None) -> None:
    content = Content()
    start = {"type": "message_start", "message": {"id": "msg-1"}}
    assert content.stream_event(start, parent) == []
    delta = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}}
    made = content.stream_event(delta, parent)
    assert made == [Emitted(kind=TextDelta(message_id="msg-1", text="hi"), parent_tool_id=parent)]
