"""Anthropic Messages API: `POST /v1/messages` (streamed or not).

In: the request body (`messages`, `tools`, `model`). The last message that
is not `role: system` (Claude Code appends one after the user turn) decides:
`tool_result` blocks make it a tool result, else its text blocks are the
user text. Out: the documented event sequence `message_start`,
`content_block_start`, `content_block_delta` (`text_delta` or
`input_json_delta`), `content_block_stop`, `message_delta` (stop reason and
usage), `message_stop`; or one `message` object when `stream` is false.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ._script import Conversation, OfferedTool, Reply, TextReply, split_deltas
from ._wire import Pause, SseEvent, Step, conversation_from, estimate_tokens, text_of

__all__ = ["complete", "read", "stream"]


def read(body: Mapping[str, Any]) -> Conversation:
    tools = [
        OfferedTool(name=str(tool["name"]), schema=tool.get("input_schema") or {})
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping) and "name" in tool
    ]
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        results = [
            block
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, Mapping) and block.get("type") == "tool_result"
        ]
        if results:
            parts = text_of(results[-1].get("content"))
            return conversation_from(
                last="tool_result", parts=parts, tools=tools, message_count=len(messages)
            )
        return conversation_from(
            last="user", parts=text_of(content), tools=tools, message_count=len(messages)
        )
    return conversation_from(last="none", parts=[], tools=tools, message_count=len(messages))


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _output_tokens(reply: Reply) -> int:
    if isinstance(reply, TextReply):
        return estimate_tokens(reply.text)
    return estimate_tokens(reply.arguments_json)


def stream(reply: Reply, *, model: str, input_tokens: int, response_id: str) -> Iterator[Step]:
    yield SseEvent(
        event="message_start",
        data={
            "type": "message_start",
            "message": {
                "id": f"msg_{response_id}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": _usage(input_tokens, 1),
            },
        },
    )
    if isinstance(reply, TextReply):
        block: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in reply.deltas]
        stop_reason = "end_turn"
    else:
        block = {"type": "tool_use", "id": reply.call_id, "name": reply.tool.name, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in split_deltas(reply.arguments_json)
        ]
        stop_reason = "tool_use"
    yield SseEvent(
        event="content_block_start",
        data={"type": "content_block_start", "index": 0, "content_block": block},
    )
    for number, delta in enumerate(deltas):
        if number and isinstance(reply, TextReply) and reply.pause:
            yield Pause(seconds=reply.pause)
        yield SseEvent(
            event="content_block_delta",
            data={"type": "content_block_delta", "index": 0, "delta": delta},
        )
    yield SseEvent(event="content_block_stop", data={"type": "content_block_stop", "index": 0})
    yield SseEvent(
        event="message_delta",
        data={
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": _usage(input_tokens, _output_tokens(reply)),
        },
    )
    yield SseEvent(event="message_stop", data={"type": "message_stop"})


def complete(reply: Reply, *, model: str, input_tokens: int, response_id: str) -> dict[str, Any]:
    if isinstance(reply, TextReply):
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
        stop_reason = "end_turn"
    else:
        arguments = reply.arguments if isinstance(reply.arguments, dict) else {}
        content = [
            {"type": "tool_use", "id": reply.call_id, "name": reply.tool.name, "input": arguments}
        ]
        stop_reason = "tool_use"
    return {
        "id": f"msg_{response_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(input_tokens, _output_tokens(reply)),
    }
