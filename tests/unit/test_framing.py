"""Sans-IO line splitting: any chunking gives the same lines; the cap holds."""

from __future__ import annotations

import pytest
from corral.pipeline.decoding import JsonLinesDecoder, NotJson
from corral.pipeline.framing import LineSplitter, Oversized
from hypothesis import given
from hypothesis import strategies as st

STREAM = b'{"a":1}\n{"b":"x\xe2\x80\xa8y"}\n\n{"c":3}'  # U+2028 inside a string


def split_all(chunks: list[bytes], max_line: int = 1024) -> list[bytes | Oversized]:
    splitter = LineSplitter(max_line=max_line)
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out += splitter.feed(chunk)
    return out + splitter.end()


def test_whole_input_splits_on_newline_only() -> None:
    assert split_all([STREAM]) == [b'{"a":1}', b'{"b":"x\xe2\x80\xa8y"}', b"", b'{"c":3}']


def test_one_byte_at_a_time_gives_the_same_lines() -> None:
    chunks = [STREAM[i : i + 1] for i in range(len(STREAM))]
    assert split_all(chunks) == split_all([STREAM])


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=8))
def test_any_chunking_gives_the_same_lines(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert split_all(chunks) == split_all([STREAM])


def test_a_last_line_without_newline_is_flushed_at_end() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"partial") == []
    assert splitter.end() == [b"partial"]


def test_a_line_over_the_cap_becomes_one_marker_and_is_never_held() -> None:
    splitter = LineSplitter(max_line=10)
    out = splitter.feed(b"ok\n" + b"x" * 8)
    out += splitter.feed(b"y" * 1000)
    assert splitter.buffered == 0  # the oversized line is discarded as it arrives
    out += splitter.feed(b"z\nafter\n")
    assert out == [b"ok", Oversized(1009), b"after"]


def test_feeding_after_end_is_refused() -> None:
    splitter = LineSplitter()
    splitter.end()
    with pytest.raises(RuntimeError):
        splitter.feed(b"x")


def test_json_lines_keep_bad_lines_as_not_json_with_a_prefix() -> None:
    decoder = JsonLinesDecoder()
    out = decoder.feed(b'{"ok":1}\nnot json\n[1,2]\n') + decoder.end()
    assert out[0] == {"ok": 1}
    assert isinstance(out[1], NotJson) and out[1].prefix == "not json"
    assert isinstance(out[2], NotJson) and "not an object" in out[2].reason


def test_json_lines_with_invalid_utf8_are_reported_not_raised() -> None:
    decoder = JsonLinesDecoder()
    out = decoder.feed(b'{"a":"\xff"}\n')
    assert isinstance(out[0], NotJson)
