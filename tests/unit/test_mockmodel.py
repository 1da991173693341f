"""The mock model server, driven over real HTTP on 127.0.0.1 with `http.client`.

Each test states one behaviour: an API's SSE event sequence, a trigger's
answer, the request log, or the HTTP plumbing (keep-alive, chunked bodies,
disconnects). The sans-IO request parser and the schema filler are tested
without a socket.
"""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs in the venv
import pytest

from tests.support.mockmodel import MockModelServer, fill_object, minimal_instance
from tests.support.mockmodel._http import HttpError, RequestParser
from tests.support.mockmodel._script import first_line

Event = tuple[str | None, Any]

BASH = {
    "name": "Bash",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}
ASK = {
    "name": "AskUserQuestion",
    "input_schema": {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string"},
                        "header": {"type": "string"},
                        "options": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "description": {"type": "string"},
                                },
                                "required": ["label", "description"],
                                "additionalProperties": False,
                            },
                        },
                        "multiSelect": {"type": "boolean"},
                    },
                    "required": ["question", "header", "options", "multiSelect"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["questions"],
    },
}
WRITE = {
    "name": "Write",
    "input_schema": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    },
}


@pytest.fixture
def server() -> Iterator[MockModelServer]:
    with MockModelServer() as running:
        yield running


def post(server: MockModelServer, path: str, body: dict[str, Any]) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return connection.getresponse()


def sse(response: http.client.HTTPResponse) -> list[Event]:
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    events: list[Event] = []
    for block in response.read().decode().split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        payload = ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                payload = line[len("data: ") :]
        events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
    return events


def claude_body(*messages: dict[str, Any], tools: list[Any] | None = None) -> dict[str, Any]:
    return {
        "model": "claude-x",
        "stream": True,
        "messages": list(messages),
        "tools": tools or [BASH],
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def anthropic_text(events: list[Event]) -> str:
    return "".join(
        e["delta"]["text"]
        for n, e in events
        if n == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )


# -- Anthropic Messages ------------------------------------------------------------


def test_anthropic_text_answer_has_the_documented_event_sequence(server: MockModelServer) -> None:
    events = sse(post(server, "/v1/messages", claude_body(user("CORRAL_ECHO hi"))))
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert set(names[2:-3]) == {"content_block_delta"}
    assert anthropic_text(events) == "You said: CORRAL_ECHO hi"
    assert events[-2][1]["usage"]["output_tokens"] > 0
    assert events[0][1]["message"]["usage"]["input_tokens"] > 0


def test_anthropic_tool_trigger_calls_bash_by_name(server: MockModelServer) -> None:
    body = claude_body(user("CORRAL_TOOL: echo corral-ok"), tools=[WRITE, BASH])
    events = sse(post(server, "/v1/messages?beta=true", body))
    start = next(e for n, e in events if n == "content_block_start")["content_block"]
    assert (start["type"], start["name"]) == ("tool_use", "Bash")
    arguments = "".join(e["delta"]["partial_json"] for n, e in events if n == "content_block_delta")
    assert json.loads(arguments) == {"command": "echo corral-ok"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert server.requests()[0].query == {"beta": "true"}


def test_anthropic_skips_the_trailing_system_message(server: MockModelServer) -> None:
    body = claude_body(user("CORRAL_ECHO first"), {"role": "system", "content": "reminder"})
    assert anthropic_text(sse(post(server, "/v1/messages", body))) == "You said: CORRAL_ECHO first"


def test_anthropic_tool_result_gets_a_final_text_quoting_it(server: MockModelServer) -> None:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "corral-ok\nmore"}
    body = claude_body(user("CORRAL_TOOL: echo corral-ok"), {"role": "user", "content": [result]})
    events = sse(post(server, "/v1/messages", body))
    assert anthropic_text(events) == "Tool said: corral-ok"
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_anthropic_ask_trigger_offers_yes_and_no(server: MockModelServer) -> None:
    body = claude_body(user("CORRAL_ASK: Proceed?"), tools=[BASH, ASK])
    answer = json.loads(post(server, "/v1/messages", {**body, "stream": False}).read())
    call = answer["content"][0]
    assert (call["type"], call["name"]) == ("tool_use", "AskUserQuestion")
    jsonschema.validate(call["input"], ASK["input_schema"])
    question = call["input"]["questions"][0]
    assert question["question"] == "Proceed?"
    assert [option["label"] for option in question["options"]] == ["Yes", "No"]


def test_anthropic_write_trigger_uses_the_write_tool(server: MockModelServer) -> None:
    body = claude_body(user("CORRAL_WRITE: /tmp/x/note.txt hello there"), tools=[BASH, WRITE])
    answer = json.loads(post(server, "/v1/messages", {**body, "stream": False}).read())
    assert answer["content"][0]["input"] == {
        "file_path": "/tmp/x/note.txt",
        "content": "hello there\n",
    }
    assert answer["stop_reason"] == "tool_use"


def test_anthropic_request_without_tools_gets_short_text(server: MockModelServer) -> None:
    body = {"model": "m", "stream": False, "messages": [user("CORRAL_SLOW title please")]}
    answer = json.loads(post(server, "/v1/messages", body).read())
    assert answer["content"] == [{"type": "text", "text": "Mock title"}]
    assert server.requests()[0].reply == "side"


def test_anthropic_count_tokens(server: MockModelServer) -> None:
    answer = json.loads(post(server, "/v1/messages/count_tokens", claude_body(user("x"))).read())
    assert answer["input_tokens"] > 0


# -- OpenAI Responses -----------------------------------------------------------------

EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "parameters": {
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "justification": {"type": "string"}},
        "required": ["cmd"],
    },
}
SHELL_ARRAY = {
    "type": "function",
    "name": "shell",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}}},
        "required": ["command"],
    },
}
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}


def responses_body(*items: dict[str, Any], tools: list[Any] | None = None) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "stream": True,
        "input": list(items),
        "tools": tools or [EXEC_COMMAND],
    }


def response_user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_responses_text_stream_ends_with_response_completed(server: MockModelServer) -> None:
    events = sse(post(server, "/v1/responses", responses_body(response_user("CORRAL_ECHO yo"))))
    names = [name for name, _ in events]
    assert names[0] == "response.created"
    assert names[-1] == "response.completed"
    assert "response.output_item.added" in names
    assert "response.output_item.done" in names
    text = "".join(e["delta"] for n, e in events if n == "response.output_text.delta")
    assert text == "You said: CORRAL_ECHO yo"
    usage = events[-1][1]["response"]["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert [e["sequence_number"] for _, e in events] == list(range(len(events)))


def test_responses_tool_call_leaves_optional_arguments_out(server: MockModelServer) -> None:
    body = responses_body(response_user("CORRAL_TOOL: echo corral-ok"))
    events = sse(post(server, "/v1/responses", body))
    done = next(e for n, e in events if n == "response.function_call_arguments.done")
    assert json.loads(done["arguments"]) == {"cmd": "echo corral-ok"}
    item = next(e for n, e in events if n == "response.output_item.done")["item"]
    assert (item["type"], item["name"]) == ("function_call", "exec_command")
    assert events[-1][0] == "response.completed"


def test_responses_array_command_runs_through_bash(server: MockModelServer) -> None:
    body = responses_body(response_user("CORRAL_TOOL: ls -la"), tools=[SHELL_ARRAY])
    answer = json.loads(post(server, "/v1/responses", {**body, "stream": False}).read())
    assert json.loads(answer["output"][0]["arguments"]) == {"command": ["bash", "-lc", "ls -la"]}


def test_responses_write_uses_freeform_apply_patch(server: MockModelServer) -> None:
    body = responses_body(
        response_user("CORRAL_WRITE: a.txt hi"), tools=[EXEC_COMMAND, APPLY_PATCH]
    )
    events = sse(post(server, "/v1/responses", body))
    item = next(e for n, e in events if n == "response.output_item.done")["item"]
    assert item["type"] == "custom_tool_call"
    assert item["input"] == "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"


def test_responses_function_output_envelope_is_skipped(server: MockModelServer) -> None:
    output = "Chunk ID: ab\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\nok-1\n"
    body = responses_body(
        response_user("CORRAL_TOOL: echo ok-1"),
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    )
    events = sse(post(server, "/v1/responses", body))
    assert events[-1][1]["response"]["output"][0]["content"][0]["text"] == "Tool said: ok-1"


# -- Chat Completions -------------------------------------------------------------------

CHAT_BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command", "description"],
        },
    },
}


def chat_body(text: str, *, include_usage: bool) -> dict[str, Any]:
    return {
        "model": "mock-model",
        "stream": True,
        "stream_options": {"include_usage": include_usage},
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}],
        "tools": [CHAT_BASH],
    }


def test_chat_tool_call_then_usage_then_done(server: MockModelServer) -> None:
    events = sse(
        post(server, "/v1/chat/completions", chat_body("CORRAL_TOOL: pwd", include_usage=True))
    )
    assert events[-1] == (None, "[DONE]")
    assert events[-2][1]["choices"] == []
    assert events[-2][1]["usage"]["total_tokens"] > 0
    calls = [
        c for _, e in events[:-2] for ch in e["choices"] for c in ch["delta"].get("tool_calls", [])
    ]
    assert calls[0]["function"]["name"] == "bash"
    arguments = json.loads("".join(c["function"]["arguments"] for c in calls))
    assert arguments == {"command": "pwd", "description": "Run pwd"}
    assert events[-3][1]["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_without_include_usage_sends_no_usage_chunk(server: MockModelServer) -> None:
    events = sse(post(server, "/v1/chat/completions", chat_body("hello", include_usage=False)))
    assert all("usage" not in e for _, e in events[:-1])
    text = "".join(ch["delta"].get("content") or "" for _, e in events[:-1] for ch in e["choices"])
    assert text == "You said: hello"


def test_chat_tool_result_quotes_first_line(server: MockModelServer) -> None:
    body = chat_body("CORRAL_TOOL: pwd", include_usage=False)
    body["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {}}]},
        {"role": "tool", "tool_call_id": "c", "content": "/work\n"},
    ]
    answer = json.loads(post(server, "/v1/chat/completions", {**body, "stream": False}).read())
    assert answer["choices"][0]["message"]["content"] == "Tool said: /work"


# -- Gemini -----------------------------------------------------------------------------

GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {"name": "read_file", "parametersJsonSchema": {"type": "object"}},
            {
                "name": "run_shell_command",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}, "dir_path": {"type": "string"}},
                    "required": ["command"],
                },
            },
        ]
    }
]


def gemini_body(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"contents": list(contents), "tools": GEMINI_TOOLS}


def test_gemini_stream_calls_run_shell_command(server: MockModelServer) -> None:
    body = gemini_body(
        {
            "role": "user",
            "parts": [
                {"text": "<session_context>x</session_context>"},
                {"text": "CORRAL_TOOL: echo g"},
            ],
        }
    )
    path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    events = sse(post(server, path, body))
    candidate = events[-1][1]["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    call = candidate["content"]["parts"][0]["functionCall"]
    assert (call["name"], call["args"]) == ("run_shell_command", {"command": "echo g"})
    assert events[-1][1]["usageMetadata"]["totalTokenCount"] > 0


def test_gemini_function_response_gets_final_text(server: MockModelServer) -> None:
    response = {
        "functionResponse": {
            "name": "run_shell_command",
            "response": {
                "output": "<untrusted_context>\nOutput: g\nProcess Group PGID: 1\n"
                "</untrusted_context>"
            },
        }
    }
    body = gemini_body(
        {"role": "user", "parts": [{"text": "CORRAL_TOOL: echo g"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command"}}]},
        {"role": "user", "parts": [response]},
    )
    answer = json.loads(post(server, "/v1beta/models/m:generateContent", body).read())
    assert answer["candidates"][0]["content"]["parts"] == [{"text": "Tool said: g"}]


ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "model_choice": {"type": "string", "enum": ["flash", "pro"]},
        "score": {"type": "integer", "minimum": 1, "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
    },
    "required": ["reasoning", "model_choice", "score", "tags"],
}


def test_gemini_router_answer_fits_the_json_schema(server: MockModelServer) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "route me"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": ROUTER_SCHEMA,
        },
    }
    answer = json.loads(post(server, "/v1beta/models/flash-lite:generateContent", body).read())
    routed = json.loads(answer["candidates"][0]["content"]["parts"][0]["text"])
    jsonschema.validate(routed, ROUTER_SCHEMA)
    assert server.requests()[0].reply == "structured"


def test_minimal_instance_reads_gemini_upper_case_types() -> None:
    schema = {
        "type": "OBJECT",
        "properties": {"score": {"type": "INTEGER"}, "why": {"type": "STRING"}},
        "required": ["score", "why"],
    }
    assert minimal_instance(schema) == {"score": 1, "why": "mock"}


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"n": {"type": "number", "exclusiveMinimum": 5}}, "$ref": "#/$defs/n"},
        {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 9}]},
        {
            "allOf": [
                {"properties": {"a": {"type": "boolean"}}, "required": ["a"]},
                {"properties": {"b": {"const": 3}}, "required": ["b"]},
            ]
        },
        {"type": ["null", "array"], "items": {"type": "integer", "maximum": -4}, "minItems": 1},
        {"type": "string", "maxLength": 2},
    ],
)
def test_minimal_instance_is_valid(schema: dict[str, Any]) -> None:
    jsonschema.validate(minimal_instance(schema), schema)


def test_fill_object_keeps_declared_values_and_fills_required() -> None:
    schema = {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b"]}
    assert fill_object(schema, {"a": "x", "zzz": 1}) == {"a": "x", "b": 1}


# -- HTTP plumbing and the request log --------------------------------------------------


def test_unknown_path_is_404_json_and_logged(server: MockModelServer) -> None:
    response = post(server, "/v2/nowhere", {"x": 1})
    assert response.status == 404
    assert "no mock route" in json.loads(response.read())["error"]["message"]
    logged = server.requests()[0]
    assert (logged.path, logged.api, logged.body) == ("/v2/nowhere", "not_found", {"x": 1})


def test_health_answers_get_and_head(server: MockModelServer) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    connection.request("HEAD", "/")
    head = connection.getresponse()
    assert head.status == 200
    assert head.read() == b""
    connection.request("GET", "/v1/models")  # same connection: keep-alive
    models = json.loads(connection.getresponse().read())
    assert "mock-model" in [entry["id"] for entry in models["data"]]


def test_chunked_request_body_is_read(server: MockModelServer) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    body = json.dumps(chat_body("chunky", include_usage=False)).encode()
    pieces = iter([body[:10], body[10:]])
    connection.request(
        "POST",
        "/v1/chat/completions",
        pieces,
        {"Content-Type": "application/json"},
        encode_chunked=True,
    )
    assert sse(connection.getresponse())[-1] == (None, "[DONE]")
    assert server.requests()[0].headers["transfer-encoding"] == "chunked"


def test_wait_for_request_returns_the_matching_request(server: MockModelServer) -> None:
    post(server, "/v1/chat/completions", chat_body("CORRAL_TOOL: id", include_usage=False)).read()
    found = server.wait_for_request(lambda r: r.tool == "bash", timeout=5)
    assert (found.api, found.reply, found.answer) == (
        "openai.chat",
        "shell",
        '{"command": "id", "description": "Run id"}',
    )
    assert server.wait_for_outcome(found.index, timeout=5) == "completed"


def test_slow_stream_stops_when_the_client_disconnects(server: MockModelServer) -> None:
    body = json.dumps(claude_body(user("CORRAL_SLOW"))).encode()
    request = (
        f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((server.host, server.port), timeout=10) as client:
        client.sendall(request)
        received = b""
        while b"slow 1/30" not in received:
            chunk = client.recv(65536)
            assert chunk, "server closed before the first delta"
            received += chunk
        assert b"slow 2/30" not in received
    hung_up = time.monotonic()
    assert server.wait_for_outcome(0, timeout=5) == "aborted"
    assert time.monotonic() - hung_up < 2.5  # one pause at most, not the 30 s stream


def test_slow_stream_paces_deltas() -> None:
    with MockModelServer(slow_pause=0.05) as fast:
        started = time.monotonic()
        events = sse(post(fast, "/v1/messages", claude_body(user("CORRAL_SLOW:4"))))
        assert anthropic_text(events) == "slow 1/4. slow 2/4. slow 3/4. slow 4/4. "
        assert time.monotonic() - started >= 0.15


# -- sans-IO parser ---------------------------------------------------------------------

RAW = (
    b"POST /v1/responses?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}"
    b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1;ext=1\r\nd\r\n0\r\n\r\n"
)


def test_parser_same_requests_whole_and_byte_by_byte() -> None:
    whole = RequestParser().feed(RAW)
    parser = RequestParser()
    single = [request for i in range(len(RAW)) for request in parser.feed(RAW[i : i + 1])]
    assert whole == single
    assert [(r.path, r.query, r.body) for r in whole] == [
        ("/v1/responses", {"x": "1"}, b"{}"),
        ("/c", {}, b"abcd"),
    ]
    assert parser.idle


def test_parser_decodes_gzip_bodies() -> None:
    body = gzip.compress(b'{"a": 1}')
    head = f"POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n"
    assert RequestParser().feed(head.encode() + body)[0].body == b'{"a": 1}'


def test_parser_stays_broken_after_garbage() -> None:
    parser = RequestParser()
    with pytest.raises(HttpError):
        parser.feed(b"NONSENSE\r\n\r\n")
    with pytest.raises(HttpError):
        parser.feed(b"GET / HTTP/1.1\r\n\r\n")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("corral-ok\nsecond", "corral-ok"),
        ('{"output": "x-1\\n", "metadata": {"exit_code": 0}}', "x-1"),
        ("corral-ok\n<shellId: 0 completed with exit code 0>", "corral-ok"),
        ("Exit code: 0\nWall time: 1 s\nOutput:\n", "(no output)"),
    ],
)
def test_first_line_skips_agent_envelopes(output: str, expected: str) -> None:
    assert first_line(output) == expected
