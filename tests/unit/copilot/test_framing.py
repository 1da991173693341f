"""Content-Length framing: whole, byte by byte, with garbage, oversized, torn."""

from __future__ import annotations

import json

import pytest
from corral.pipeline.decoding import NotJson, Oversized
from corral.sources.copilot._framing import ContentLengthDecoder, frame

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
    {"jsonrpc": "2.0", "method": "session.event", "params": {"text": "line\u2028sep\nnewline"}},
    {"jsonrpc": "2.0", "method": "x", "params": {"emoji": "\U0001f600"}},
]
STREAM = b"".join(frame(json.dumps(m, ensure_ascii=False).encode()) for m in MESSAGES)


def decode(chunks: list[bytes], decoder: ContentLengthDecoder | None = None) -> list[object]:
    decoder = decoder or ContentLengthDecoder()
    out: list[object] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out + decoder.end()


def test_a_stream_decodes_whole() -> None:
    assert decode([STREAM]) == MESSAGES


def test_a_stream_decodes_byte_by_byte() -> None:
    assert decode([STREAM[i : i + 1] for i in range(len(STREAM))]) == MESSAGES


def test_other_headers_and_bare_newlines_are_accepted() -> None:
    body = b'{"a":1}'
    data = b"Content-Type: application/json\ncontent-length: 7\n\n" + body
    assert decode([data]) == [{"a": 1}]


def test_trailing_garbage_is_reported_at_the_end() -> None:
    out = decode([STREAM + b"garbage"])
    assert out[:3] == MESSAGES
    [torn] = out[3:]
    assert isinstance(torn, NotJson) and "ended inside" in torn.reason


def test_a_header_block_without_content_length_is_skipped_and_reading_goes_on() -> None:
    out = decode([b"X-Junk: 1\r\n\r\n" + STREAM])
    assert isinstance(out[0], NotJson)
    assert out[1:] == MESSAGES


def test_a_body_that_is_not_json_is_reported_with_its_prefix() -> None:
    [bad, good] = decode([frame(b"nope!") + frame(b'{"b":2}')])
    assert isinstance(bad, NotJson) and bad.prefix == "nope!"
    assert good == {"b": 2}


def test_an_oversized_body_is_discarded_as_it_arrives() -> None:
    big = frame(b'{"x":"' + b"y" * 100 + b'"}')
    decoder = ContentLengthDecoder(max_message=50)
    out = decode([big[i : i + 7] for i in range(0, len(big), 7)] + [frame(b"{}")], decoder)
    assert out == [Oversized(108), {}]


def test_feeding_after_end_is_a_bug() -> None:
    decoder = ContentLengthDecoder()
    decoder.end()
    with pytest.raises(RuntimeError):
        decoder.feed(b"x")
