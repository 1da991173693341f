"""A stateless mock of the model APIs that real agent CLIs call.

`MockModelServer` is a stdlib-only asyncio HTTP/1.1 server on 127.0.0.1
(port 0 by default) running in a background thread::

    with MockModelServer() as server:
        env["ANTHROPIC_BASE_URL"] = server.url      # http://127.0.0.1:PORT
        ...
        server.wait_for_request(lambda r: r.reply == "shell")

It also runs by hand: ``python -m tests.support.mockmodel --port 8765``.

Endpoints (paths matched by suffix, so base URLs with or without ``/v1``):

=============================================  ================================
``POST /v1/messages`` (``?beta=true`` too)      Anthropic Messages, SSE or JSON
``POST /v1/messages/count_tokens``              ``{"input_tokens": N}``
``POST /v1/responses``                          OpenAI Responses, SSE or JSON
``POST /v1/chat/completions``                   Chat Completions, SSE or JSON
``POST /v1beta/models/M:streamGenerateContent`` Gemini, SSE (``alt=sse``)
``POST /v1beta/models/M:generateContent``       Gemini, JSON
``POST /v1beta/models/M:countTokens``           ``{"totalTokens": N}``
``GET|HEAD /``, ``/health``, ``/healthz``       ``{"status": "ok"}``
``GET /v1/models``, ``/v1/models/ID``           OpenAI-style model list / entry
``GET /v1beta/models``                          Gemini-style model list
anything else                                   404 with a JSON error (logged)
=============================================  ================================

Every stream carries usage numbers. The server keeps no conversation state:
the answer depends only on the request, read from its LAST user-side message
(Claude's trailing ``role: system`` message, developer messages, reasoning
and assistant items are skipped).

Trigger grammar (case-sensitive, anywhere in the last user message; the
first rule that matches wins)::

    last message is a tool result   -> text "Tool said: <first line of the
                                       command's own output>" (agent
                                       envelopes such as "Exit code: 0" or
                                       "Output:" are skipped)
    request offers no tools         -> short text "Mock title" (titles,
                                       summaries and other side calls)
    Gemini JSON-schema request      -> a minimal JSON object fitting
                                       ``responseJsonSchema``/``responseSchema``
    CORRAL_TOOL: <shell command>    -> a call of the agent's shell tool
                                       (Bash, shell_command, shell,
                                       exec_command, run_shell_command,
                                       bash, powershell: first offered) with
                                       the rest of the line as the command;
                                       the argument name and string-or-array
                                       form come from the tool's schema
    CORRAL_WRITE: <path> <text>     -> a call of the agent's file-write tool
                                       (Write, write_file, write, create,
                                       str_replace_based_edit_tool, else an
                                       apply_patch "Add File" patch, else the
                                       shell tool with printf); use an
                                       absolute path
    CORRAL_ASK: <question>          -> a call of the question tool
                                       (AskUserQuestion, request_user_input,
                                       ask_user, question) with options
                                       "Yes" and "No"
    CORRAL_SLOW[:N]                 -> text "slow 1/N. slow 2/N. ..." streamed
                                       one delta per `slow_pause` seconds
                                       (default N=30, 1 s); the stream stops
                                       as soon as the client disconnects
    CORRAL_ECHO or anything else    -> text "You said: <user text>" (the
                                       message part that holds the trigger,
                                       whitespace collapsed), in 3 deltas

A trigger whose tool is not offered answers text starting "No shell tool
offered" / "No question tool offered" (``reply == "no_tool"``).
"""

from ._routes import MOCK_MODELS
from ._schema import fill_object, minimal_instance
from ._server import MockModelServer, Outcome, RecordedRequest

__all__ = [
    "MOCK_MODELS",
    "MockModelServer",
    "Outcome",
    "RecordedRequest",
    "fill_object",
    "minimal_instance",
]
