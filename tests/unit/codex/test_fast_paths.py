"""The Codex normalizers' fast paths read what their checked paths read.

A fast path skips the checks a well-formed frame does not need; these tests
hold it to the general path's result (and to its error, for a frame that
is not well formed), so the two cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from corral.pipeline.driver import Emitted
from corral.pipeline.events import Fields, ShapeError, TextDelta
from corral.pipeline.tokens import TokenCount
from corral.sources.codex import AppServerNormalizer
from corral.sources.codex._common import (
    Tokens,
    _checked_user_text,
    _plain_user_text,
    user_text,
)

_TEXT = {"type": "text", "text": "hello"}
_CONTENTS: list[Any] = [
    None,
    [],
    [_TEXT],
    [_TEXT, {"type": "image", "url": "u"}, {"type": "text", "text": "world"}],
    [{"text": "no type"}, _TEXT],
    [{"type": "text", "text": ""}],
    # not well formed: the checked path says what is wrong
    "text",
    {"type": "text"},
    [_TEXT, "piece"],
    [{"type": "text", "text": 3}],
    [{"type": "text"}],
    [{"type": 7, "text": "x"}],
    [{"type": None, "text": "x"}],
]


@pytest.mark.parametrize("content", _CONTENTS)
def test_user_text_fast_path_reads_what_the_checked_path_reads(content: object) -> None:
    item = Fields({"content": content} if content is not None else {}, "item")
    plain = _plain_user_text(content)
    try:
        checked: str | ShapeError = _checked_user_text(item)
    except ShapeError as error:
        checked = error
    if isinstance(checked, ShapeError):
        assert plain is None  # only the checked path may fail
        with pytest.raises(ShapeError, match=re.escape(str(checked))):
            user_text(item)
    else:
        assert plain == checked
        assert user_text(item) == checked


def test_token_count_is_the_counts_under_corrals_names() -> None:
    tokens = Tokens(input=10, cached=4, cache_write=3, output=2, reasoning=1)
    assert tokens.count() == TokenCount.from_counts(
        {"input": 6, "output": 2, "cache_read": 4, "cache_write": 3, "reasoning": 1}
    )
    assert Tokens(input=1, cached=5).count().input == 0  # never negative


def test_a_text_delta_is_the_event_the_constructors_make() -> None:
    normalizer = AppServerNormalizer(wall_clock_ns=lambda: 0)
    made = normalizer.notification("item/agentMessage/delta", {"itemId": "i1", "delta": "hi"})
    assert made == [Emitted(kind=TextDelta(message_id="i1", text="hi"))]
