"""Gemini API: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
`:generateContent` and `:countTokens`.

In: `contents` (the last `user` content with `functionResponse` parts is a
tool result, else its text parts are user text), `tools[].functionDeclarations`
(schema under `parametersJsonSchema` or `parameters`), and
`generationConfig.responseJsonSchema`/`responseSchema`. A request asking for
JSON output is a structured side call (Gemini CLI's model router, its
next-speaker and loop checks): it gets a JSON object fitting the schema,
since a non-fitting answer makes Gemini CLI retry with backoff and hang.
Out: SSE `data:` chunks of `GenerateContentResponse` (text or `functionCall`
parts, `usageMetadata` on each, `finishReason: STOP` on the last), or one
such object for `generateContent`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ._schema import minimal_instance
from ._script import Conversation, OfferedTool, Reply, TextReply
from ._wire import Pause, SseEvent, Step, conversation_from, estimate_tokens, text_of

__all__ = ["complete", "json_schema_of", "read", "stream", "structured_reply"]


def json_schema_of(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema of a structured-output request, or None."""
    config = body.get("generationConfig") or body.get("generation_config") or {}
    if not isinstance(config, Mapping):
        return None
    for key in ("responseJsonSchema", "responseSchema", "response_json_schema"):
        schema = config.get(key)
        if isinstance(schema, Mapping):
            return schema
    if config.get("responseMimeType") == "application/json":
        return {"type": "object"}
    return None


def structured_reply(schema: Mapping[str, Any]) -> TextReply:
    return TextReply(deltas=(json.dumps(minimal_instance(schema)),), label="structured")


def read(body: Mapping[str, Any]) -> Conversation:
    tools: list[OfferedTool] = []
    for group in body.get("tools") or []:
        if not isinstance(group, Mapping):
            continue
        for declaration in group.get("functionDeclarations") or []:
            if isinstance(declaration, Mapping) and "name" in declaration:
                schema = declaration.get("parametersJsonSchema") or declaration.get("parameters")
                tools.append(OfferedTool(name=str(declaration["name"]), schema=schema or {}))
    contents = [c for c in body.get("contents") or [] if isinstance(c, Mapping)]
    for content in reversed(contents):
        if content.get("role", "user") != "user":
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, Mapping)]
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if responses:
            return conversation_from(
                last="tool_result",
                parts=_response_texts(responses[-1]),
                tools=tools,
                message_count=len(contents),
            )
        return conversation_from(
            last="user", parts=text_of(parts), tools=tools, message_count=len(contents)
        )
    return conversation_from(last="none", parts=[], tools=tools, message_count=len(contents))


def _response_texts(function_response: Any) -> list[str]:
    response = function_response.get("response") if isinstance(function_response, Mapping) else None
    if isinstance(response, Mapping):
        for key in ("output", "llmContent", "content", "error"):
            if isinstance(response.get(key), str):
                return [response[key]]
        return [json.dumps(response)]
    return [str(response)]


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "promptTokenCount": input_tokens,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": input_tokens + output_tokens,
    }


def _chunk(
    parts: list[dict[str, Any]], *, model: str, usage: dict[str, int], finish: bool, rid: str
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": rid,
    }


def _parts(reply: Reply) -> list[list[dict[str, Any]]]:
    if isinstance(reply, TextReply):
        return [[{"text": piece}] for piece in reply.deltas]
    arguments = reply.arguments if isinstance(reply.arguments, dict) else {}
    call = {"name": reply.tool.name, "args": arguments, "id": reply.call_id}
    return [[{"functionCall": call}]]


def _output_tokens(reply: Reply) -> int:
    return estimate_tokens(reply.text if isinstance(reply, TextReply) else reply.arguments_json)


def stream(reply: Reply, *, model: str, input_tokens: int, response_id: str) -> Iterator[Step]:
    batches = _parts(reply)
    usage = _usage(input_tokens, _output_tokens(reply))
    for number, parts in enumerate(batches):
        if number and isinstance(reply, TextReply) and reply.pause:
            yield Pause(seconds=reply.pause)
        last = number == len(batches) - 1
        yield SseEvent(data=_chunk(parts, model=model, usage=usage, finish=last, rid=response_id))


def complete(reply: Reply, *, model: str, input_tokens: int, response_id: str) -> dict[str, Any]:
    parts = [part for batch in _parts(reply) for part in batch]
    if isinstance(reply, TextReply):
        parts = [{"text": reply.text}]
    usage = _usage(input_tokens, _output_tokens(reply))
    return _chunk(parts, model=model, usage=usage, finish=True, rid=response_id)
