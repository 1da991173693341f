"""The `acp-flood` bench phase's agent: one prompt answered by a flood of chunks.

A fake ACP agent speaking the protocol's JSON-RPC over stdio, one JSON
object a line, with nothing but orjson (the bench must run without the ACP
SDK): `initialize` (protocol 1, no capabilities, no authentication),
`session/new` (session `flood-1`), and `session/prompt`, answered with
`--updates` `session/update` notifications of kind `agent_message_chunk`
(text `t<i> `, i from 0) and then the prompt's result, stop reason
`end_turn`. Any other request is answered -32601; notifications
(`session/cancel`) and replies are ignored. EOF on stdin ends it.

The flood is encoded once, at start (before `initialize`), and written in
blocks of about 64 KiB: the agent's own cost is kept out of the way of the
flood, so what the bench measures is the reader's. Writes block when the
pipe is full: the reader's pace is the flood's.

Run as `python -m corral.actors.bench._flood_agent --updates N`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

__all__ = ["SESSION_ID", "chunk_text", "main"]

SESSION_ID = "flood-1"
_BLOCK = 64 * 1024
_METHOD_NOT_FOUND = -32601


def chunk_text(index: int) -> str:
    """The text of the flood's chunk number `index` (from 0)."""
    return f"t{index} "


def _line(message: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def _flood(updates: int) -> Iterator[bytes]:
    """The chunk notifications, joined in blocks of about `_BLOCK` bytes."""
    block: list[bytes] = []
    size = 0
    for index in range(updates):
        content = {"type": "text", "text": chunk_text(index)}
        update = {"sessionUpdate": "agent_message_chunk", "content": content}
        line = _line(
            {"method": "session/update", "params": {"sessionId": SESSION_ID, "update": update}}
        )
        block.append(line)
        size += len(line)
        if size >= _BLOCK:
            yield b"".join(block)
            block, size = [], 0
    if block:
        yield b"".join(block)


def _result(request: dict[str, Any], flood: list[bytes]) -> Iterator[bytes]:
    """What the agent writes for one request: a flood first for a prompt."""
    match request["method"]:
        case "initialize":
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "authMethods": [],
                "agentInfo": {"name": "flood", "version": "1.0.0"},
            }
        case "session/new":
            result = {"sessionId": SESSION_ID}
        case "session/prompt":
            yield from flood
            result = {"stopReason": "end_turn"}
        case method:
            error = {"code": _METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
            yield _line({"id": request["id"], "error": error})
            return
    yield _line({"id": request["id"], "result": result})


def serve(requests_in: BinaryIO, lines_out: BinaryIO, updates: int) -> None:
    flood = list(_flood(updates))
    for raw in requests_in:
        if not raw.strip():
            continue
        message = orjson.loads(raw)
        if "method" not in message or "id" not in message:
            continue  # a notification (session/cancel) or a reply: nothing to answer
        for block in _result(message, flood):
            lines_out.write(block)
        lines_out.flush()


def main(argv: list[str] | None = None) -> None:
    flags = argparse.ArgumentParser(prog="flood-agent")
    flags.add_argument("--updates", type=int, default=100_000)
    args = flags.parse_args(argv)
    serve(sys.stdin.buffer, sys.stdout.buffer, args.updates)


if __name__ == "__main__":
    main()
