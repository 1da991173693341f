"""OpenAI Responses (`POST /v1/responses`) and Chat Completions
(`POST /v1/chat/completions`).

Responses in: `input` (a string or items); the last item that is not
reasoning, an assistant item or a system/developer message decides: a
`*_call_output` item is a tool result, a user message is user text. Tools
are `function` items (JSON arguments) or `custom` items (freeform text).
Out: `response.created`, `response.in_progress`, then per output item
`response.output_item.added`, text or argument deltas and their `done`
events, `response.output_item.done`, and always `response.completed` (with
usage), which Codex requires before it ends a turn.

Chat Completions in: `messages`; a last `role: tool` message is a tool
result. Out: `chat.completion.chunk`s with `delta.content` or
`delta.tool_calls`, a final chunk with `finish_reason`, a usage chunk when
`stream_options.include_usage`, then `data: [DONE]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._script import Conversation, OfferedTool, Reply, TextReply, ToolCallReply, split_deltas
from ._wire import Pause, SseEvent, Step, conversation_from, estimate_tokens, text_of

__all__ = [
    "chat_complete",
    "chat_read",
    "chat_stream",
    "responses_complete",
    "responses_read",
    "responses_stream",
]

_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
_TEXT_KEYS = ("text", "output")


def responses_read(body: Mapping[str, Any]) -> Conversation:
    tools: list[OfferedTool] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, Mapping) or "name" not in tool:
            continue
        freeform = tool.get("type") == "custom"
        tools.append(
            OfferedTool(
                name=str(tool["name"]), schema=tool.get("parameters") or {}, freeform=freeform
            )
        )
    items = body.get("input")
    if isinstance(items, str):
        return conversation_from(last="user", parts=[items], tools=tools, message_count=1)
    items = [item for item in items or [] if isinstance(item, Mapping)]
    for item in reversed(items):
        kind = item.get("type", "message")
        if kind in _TOOL_OUTPUTS:
            parts = text_of(item.get("output"), text_keys=_TEXT_KEYS)
            return conversation_from(
                last="tool_result", parts=parts, tools=tools, message_count=len(items)
            )
        if kind == "message" and item.get("role") == "user":
            return conversation_from(
                last="user",
                parts=text_of(item.get("content")),
                tools=tools,
                message_count=len(items),
            )
    return conversation_from(last="none", parts=[], tools=tools, message_count=len(items))


def _responses_usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def _response(
    response_id: str, model: str, status: str, output: list[Any], usage: Any
) -> dict[str, Any]:
    return {
        "id": f"resp_{response_id}",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }


def _output_item(reply: Reply, response_id: str) -> dict[str, Any]:
    if isinstance(reply, TextReply):
        return {
            "id": f"msg_{response_id}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
    if reply.tool.freeform:
        return {
            "id": f"ctc_{response_id}",
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": reply.call_id,
            "name": reply.tool.name,
            "input": reply.arguments_json,
        }
    return {
        "id": f"fc_{response_id}",
        "type": "function_call",
        "status": "completed",
        "call_id": reply.call_id,
        "name": reply.tool.name,
        "arguments": reply.arguments_json,
    }


def _output_tokens(reply: Reply) -> int:
    return estimate_tokens(reply.text if isinstance(reply, TextReply) else reply.arguments_json)


def responses_stream(
    reply: Reply, *, model: str, input_tokens: int, response_id: str
) -> Iterator[Step]:
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> SseEvent:
        return SseEvent(
            event=kind, data={"type": kind, "sequence_number": next(sequence), **fields}
        )

    yield event("response.created", response=_response(response_id, model, "in_progress", [], None))
    yield event(
        "response.in_progress", response=_response(response_id, model, "in_progress", [], None)
    )
    done = _output_item(reply, response_id)
    item_id = done["id"]
    if isinstance(reply, TextReply):
        added = {**done, "status": "in_progress", "content": []}
        yield event("response.output_item.added", output_index=0, item=added)
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        yield event("response.content_part.added", **where, part=part)
        for number, piece in enumerate(reply.deltas):
            if number and reply.pause:
                yield Pause(seconds=reply.pause)
            yield event("response.output_text.delta", **where, delta=piece)
        yield event("response.output_text.done", **where, text=reply.text)
        yield event("response.content_part.done", **where, part={**part, "text": reply.text})
    else:
        yield from _call_events(event, reply, done)
    yield event("response.output_item.done", output_index=0, item=done)
    usage = _responses_usage(input_tokens, _output_tokens(reply))
    yield event(
        "response.completed", response=_response(response_id, model, "completed", [done], usage)
    )


def _call_events(
    event: Callable[..., SseEvent], reply: ToolCallReply, done: dict[str, Any]
) -> Iterator[Step]:
    where = {"item_id": done["id"], "output_index": 0}
    if reply.tool.freeform:
        yield event("response.output_item.added", output_index=0, item={**done, "input": ""})
        for piece in split_deltas(reply.arguments_json):
            yield event("response.custom_tool_call_input.delta", **where, delta=piece)
        yield event("response.custom_tool_call_input.done", **where, input=reply.arguments_json)
        return
    added = {**done, "status": "in_progress", "arguments": ""}
    yield event("response.output_item.added", output_index=0, item=added)
    for piece in split_deltas(reply.arguments_json):
        yield event("response.function_call_arguments.delta", **where, delta=piece)
    yield event("response.function_call_arguments.done", **where, arguments=reply.arguments_json)


def responses_complete(
    reply: Reply, *, model: str, input_tokens: int, response_id: str
) -> dict[str, Any]:
    usage = _responses_usage(input_tokens, _output_tokens(reply))
    return _response(response_id, model, "completed", [_output_item(reply, response_id)], usage)


def chat_read(body: Mapping[str, Any]) -> Conversation:
    tools = [
        OfferedTool(name=str(fn["name"]), schema=fn.get("parameters") or {})
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping)
        and isinstance(fn := tool.get("function"), Mapping)
        and "name" in fn
    ]
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    for message in reversed(messages):
        role = message.get("role")
        if role in ("tool", "function"):
            return conversation_from(
                last="tool_result",
                parts=text_of(message.get("content")),
                tools=tools,
                message_count=len(messages),
            )
        if role == "user":
            return conversation_from(
                last="user",
                parts=text_of(message.get("content")),
                tools=tools,
                message_count=len(messages),
            )
    return conversation_from(last="none", parts=[], tools=tools, message_count=len(messages))


def _chat_usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


def chat_stream(
    reply: Reply, *, model: str, input_tokens: int, response_id: str, include_usage: bool
) -> Iterator[Step]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> SseEvent:
        return SseEvent(
            data={
                "id": f"chatcmpl-{response_id}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    if isinstance(reply, TextReply):
        yield chunk({"role": "assistant", "content": ""})
        for number, piece in enumerate(reply.deltas):
            if number and reply.pause:
                yield Pause(seconds=reply.pause)
            yield chunk({"content": piece})
        yield chunk({}, "stop")
    else:
        call = {
            "index": 0,
            "id": reply.call_id,
            "type": "function",
            "function": {"name": reply.tool.name, "arguments": ""},
        }
        yield chunk({"role": "assistant", "content": None, "tool_calls": [call]})
        for piece in split_deltas(reply.arguments_json):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls")
    if include_usage:
        yield SseEvent(
            data={
                "id": f"chatcmpl-{response_id}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": _chat_usage(input_tokens, _output_tokens(reply)),
            }
        )
    yield SseEvent(data="[DONE]")


def chat_complete(
    reply: Reply, *, model: str, input_tokens: int, response_id: str
) -> dict[str, Any]:
    if isinstance(reply, TextReply):
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        finish = "stop"
    else:
        call = {
            "id": reply.call_id,
            "type": "function",
            "function": {"name": reply.tool.name, "arguments": reply.arguments_json},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{response_id}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _chat_usage(input_tokens, _output_tokens(reply)),
    }
