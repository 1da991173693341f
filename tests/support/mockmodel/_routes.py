"""Map one HTTP request to a `Plan`: which API it is, what to answer.

Pure: `plan(request, ...)` reads the request and returns either a JSON body
or a sequence of SSE steps, plus the labels the request log records. Paths
are matched by suffix so a base URL with or without `/v1` works.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from . import _anthropic, _gemini, _openai
from ._http import HttpRequest
from ._script import Reply, TextReply, decide
from ._wire import Step, estimate_tokens

__all__ = ["MOCK_MODELS", "Plan", "plan"]

MOCK_MODELS = ("mock-model", "gpt-5.5", "claude-sonnet-4-5", "gemini-2.5-pro", "gemini-2.5-flash")
_HEALTH_PATHS = ("/", "/health", "/healthz", "/v1/health", "/ping")
_GEMINI_RE = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


class _Common(TypedDict):
    """The keyword arguments every adapter's `stream`/`complete` takes."""

    model: str
    input_tokens: int
    response_id: str


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The answer to one request; exactly one of `json_body` and `steps` is set."""

    api: str
    label: str
    status: int = 200
    body: Any = None
    json_body: Any = None
    steps: Iterable[Step] | None = None
    tool: str | None = None
    text: str | None = None


def plan(request: HttpRequest, *, slow_pause: float, response_id: str) -> Plan:
    path = request.path
    if request.method in ("GET", "HEAD"):
        return _plan_get(path)
    if request.method != "POST":
        return _error(405, f"method {request.method} not allowed", api="unknown")
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return _error(400, "request body is not JSON", api="bad_request")
    if not isinstance(body, Mapping):
        return _error(400, "request body is not a JSON object", api="bad_request")
    tokens = estimate_tokens(request.body.decode("utf-8", "replace"))
    model = str(body.get("model") or "mock-model")
    common = _Common(model=model, input_tokens=tokens, response_id=response_id)
    stream = bool(body.get("stream"))
    if path.endswith("/messages/count_tokens"):
        return Plan(
            api="anthropic.count_tokens",
            label="count",
            body=body,
            json_body={"input_tokens": tokens},
        )
    if path.endswith("/messages"):
        reply = decide(_anthropic.read(body), slow_pause=slow_pause)
        if stream:
            return _streamed("anthropic.messages", reply, body, _anthropic.stream(reply, **common))
        return _answered("anthropic.messages", reply, body, _anthropic.complete(reply, **common))
    if path.endswith("/responses"):
        reply = decide(_openai.responses_read(body), slow_pause=slow_pause)
        if stream:
            steps = _openai.responses_stream(reply, **common)
            return _streamed("openai.responses", reply, body, steps)
        return _answered(
            "openai.responses", reply, body, _openai.responses_complete(reply, **common)
        )
    if path.endswith("/chat/completions"):
        reply = decide(_openai.chat_read(body), slow_pause=slow_pause)
        if stream:
            options = body.get("stream_options")
            usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
            steps = _openai.chat_stream(reply, **common, include_usage=usage)
            return _streamed("openai.chat", reply, body, steps)
        return _answered("openai.chat", reply, body, _openai.chat_complete(reply, **common))
    if match := _GEMINI_RE.search(path):
        gemini_common = _Common(model=match["model"], input_tokens=tokens, response_id=response_id)
        return _plan_gemini(match["method"], body, common=gemini_common, slow_pause=slow_pause)
    return _error(404, f"no mock route for POST {path}", api="not_found", body=body)


def _plan_gemini(
    method: str, body: Mapping[str, Any], *, common: _Common, slow_pause: float
) -> Plan:
    if method == "countTokens":
        return Plan(
            api="gemini.count_tokens",
            label="count",
            body=body,
            json_body={"totalTokens": common["input_tokens"]},
        )
    schema = _gemini.json_schema_of(body)
    reply: Reply
    if schema is not None:
        reply = _gemini.structured_reply(schema)
    else:
        reply = decide(_gemini.read(body), slow_pause=slow_pause)
    if method == "streamGenerateContent":
        return _streamed("gemini.stream", reply, body, _gemini.stream(reply, **common))
    if method == "generateContent":
        return _answered("gemini.generate", reply, body, _gemini.complete(reply, **common))
    return _error(404, f"no mock route for Gemini method {method}", api="not_found", body=body)


def _plan_get(path: str) -> Plan:
    trimmed = path.rstrip("/") or "/"
    if trimmed in _HEALTH_PATHS:
        return Plan(api="health", label="health", json_body={"status": "ok"})
    if trimmed.endswith("/v1beta/models"):
        models = [{"name": f"models/{name}", "displayName": name} for name in MOCK_MODELS]
        return Plan(api="models", label="models", json_body={"models": models})
    if trimmed.endswith("/models"):
        data = [_model_entry(name) for name in MOCK_MODELS]
        return Plan(api="models", label="models", json_body={"object": "list", "data": data})
    if "/models/" in trimmed:
        return Plan(api="models", label="model", json_body=_model_entry(trimmed.split("/")[-1]))
    return _error(404, f"no mock route for GET {path}", api="not_found")


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "id": name,
        "object": "model",
        "type": "model",
        "created": 0,
        "created_at": "1970-01-01T00:00:00Z",
        "owned_by": "corral-mock",
        "display_name": name,
    }


def _error(status: int, message: str, *, api: str, body: Any = None) -> Plan:
    error = {"type": "error", "error": {"type": api, "message": message, "code": status}}
    return Plan(api=api, label="error", status=status, body=body, json_body=error)


def _labels(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, TextReply):
        return {"label": reply.label, "text": reply.text}
    return {"label": reply.label, "tool": reply.tool.name, "text": reply.arguments_json}


def _streamed(api: str, reply: Reply, body: Any, steps: Iterable[Step]) -> Plan:
    return Plan(api=api, body=body, steps=steps, **_labels(reply))


def _answered(api: str, reply: Reply, body: Any, answer: Any) -> Plan:
    return Plan(api=api, body=body, json_body=answer, **_labels(reply))
