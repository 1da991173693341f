"""What corral writes: prompts (with attachments) and control messages."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from corral.pipeline.driver import StartTurn
from corral.sources.claude import ClaudeProtocol
from corral.sources.claude._driver import load_attachments
from corral.sources.claude._encode import FileAttachment, ImageAttachment

# The smallest valid PNG: one transparent pixel.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_images_load_inline_and_other_files_by_name(tmp_path: Path) -> None:
    (tmp_path / "pic.png").write_bytes(PIXEL)
    (tmp_path / "notes.txt").write_text("hi")
    loaded = load_attachments(("pic.png", "notes.txt", "missing.png"), str(tmp_path))
    assert loaded == (
        ImageAttachment(media_type="image/png", data=PIXEL),
        FileAttachment(path="notes.txt"),
        FileAttachment(path="missing.png"),
    )


def test_prompt_with_attachments_has_text_then_image_then_mention() -> None:
    protocol = ClaudeProtocol(new_id=lambda: "u-1")
    attachments = (ImageAttachment(media_type="image/png", data=PIXEL), FileAttachment("a.txt"))
    data, events = protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="look"), attachments)
    assert events == [] and data.endswith(b"\n") and data.count(b"\n") == 1
    frame = json.loads(data)
    assert frame["uuid"] == "u-1" and frame["type"] == "user"
    text, image, mention = frame["message"]["content"]
    assert text == {"type": "text", "text": "look"}
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PIXEL).decode(),
    }
    assert mention == {"type": "text", "text": "@a.txt"}


def test_a_prompt_with_a_newline_is_still_one_line() -> None:
    protocol = ClaudeProtocol()
    data, _ = protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="a\nb\u2028c"))
    assert data.count(b"\n") == 1
    assert json.loads(data)["message"]["content"][0]["text"] == "a\nb\u2028c"


def test_each_prompt_gets_a_new_uuid() -> None:
    protocol = ClaudeProtocol()
    first, _ = protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="a"))
    second, _ = protocol.send(StartTurn(turn_id="t2", prompt_id="p2", text="b"))
    assert json.loads(first)["uuid"] != json.loads(second)["uuid"]
