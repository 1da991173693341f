"""Encoding corral's side of the stream-json wire: one JSON object per line.

What flows out: user messages (the prompt, with image blocks for image
attachments), `control_request`s we start (`initialize`, `interrupt`,
`set_model`, `set_permission_mode`, `cancel_async_message`) and
`control_response`s to the CLI's own requests. Every line ends in `\\n`;
orjson never writes a raw newline inside a string, so a line is a frame.

Attachments are read by the driver (I/O) and handed over as values.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import attrs
import orjson

__all__ = [
    "Attachment",
    "FileAttachment",
    "ImageAttachment",
    "control_error",
    "control_request",
    "control_success",
    "encode",
    "user_message",
]


@attrs.frozen
class ImageAttachment:
    media_type: str
    data: bytes


@attrs.frozen
class FileAttachment:
    """A file the agent should look at; Claude Code reads `@path` mentions."""

    path: str


Attachment = ImageAttachment | FileAttachment


def encode(frame: dict[str, Any]) -> bytes:
    return orjson.dumps(frame) + b"\n"


def _blocks(text: str, attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for attachment in attachments:
        match attachment:
            case ImageAttachment(media_type=media_type, data=data):
                blocks.append(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": media_type,
                            "data": base64.b64encode(data).decode("ascii"),
                        },
                    }
                )
            case FileAttachment(path=path):
                blocks.append({"type": "text", "text": f"@{path}"})
    return blocks


def user_message(text: str, uuid: str, attachments: Sequence[Attachment] = ()) -> dict[str, Any]:
    """One prompt; the CLI echoes `uuid` in its lifecycle and result frames."""
    return {
        "type": "user",
        "message": {"role": "user", "content": _blocks(text, attachments)},
        "parent_tool_use_id": None,
        "session_id": "",
        "uuid": uuid,
    }


def control_request(request_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": body}


def control_success(request_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": payload},
    }


def control_error(request_id: str, message: str) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": message},
    }
