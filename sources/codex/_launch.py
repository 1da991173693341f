"""What corral asks of Codex when a session opens and when a turn starts.

`launch_options` checks the options the app chose at open (`model`,
`effort`, `sandbox`, `isolate_home`); `thread_request` builds the
`thread/start`, `thread/resume` or `thread/fork` request; `turn_input`
builds a turn's `input` (the prompt text, image attachments as
`localImage`, other attachments named in the text).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import LaunchSpec
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import ConfigValue
from ._handshake import APPROVAL_POLICY, SANDBOXES, mcp_config

__all__ = ["launch_options", "thread_request", "turn_input"]

_IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"})
_STRING_OPTIONS = ("model", "effort", "sandbox")


def _invalid(message: str) -> CorralError:
    return CorralError(ErrorKind.INVALID_CONFIGURATION, message)


def launch_options(chosen: tuple[tuple[str, ConfigValue], ...]) -> dict[str, ConfigValue]:
    """The open-time options, checked; defaults filled in."""
    options: dict[str, ConfigValue] = {"sandbox": SANDBOXES[0], "isolate_home": False}
    for option, value in chosen:
        if option in _STRING_OPTIONS:
            if not isinstance(value, str) or not value:
                raise _invalid(f"Codex option {option} takes a string")
            if option == "sandbox" and value not in SANDBOXES:
                raise _invalid(f"{value!r} is not a Codex sandbox ({', '.join(SANDBOXES)})")
        elif option == "isolate_home":
            if not isinstance(value, bool):
                raise _invalid("Codex option isolate_home takes true or false")
        else:
            known = ", ".join((*_STRING_OPTIONS, "isolate_home"))
            raise _invalid(f"Codex has no option {option!r} (options: {known})")
        options[option] = value
    return options


def thread_request(
    spec: LaunchSpec, options: Mapping[str, ConfigValue]
) -> tuple[str, dict[str, Any]]:
    """(method, params) opening the session's thread."""
    params: dict[str, Any] = {
        "cwd": spec.dir,
        "approvalPolicy": APPROVAL_POLICY,
        "sandbox": options["sandbox"],
    }
    if isinstance(options.get("model"), str):
        params["model"] = options["model"]
    config: dict[str, Any] = {}
    if isinstance(options.get("effort"), str):
        config["model_reasoning_effort"] = options["effort"]
    if spec.mcp_servers:
        config["mcp_servers"] = mcp_config(spec.mcp_servers)
    if config:
        params["config"] = config
    if spec.resume is not None:
        return "thread/resume", {**params, "threadId": spec.resume, "excludeTurns": True}
    if spec.fork is not None:
        forked = {**params, "threadId": spec.fork, "excludeTurns": True}
        if spec.fork_at is not None:
            forked["lastTurnId"] = spec.fork_at
        return "thread/fork", forked
    return "thread/start", params


def turn_input(text: str, attachments: tuple[str, ...]) -> list[dict[str, Any]]:
    images = [a for a in attachments if os.path.splitext(a)[1].lower() in _IMAGE_SUFFIXES]
    others = [a for a in attachments if a not in images]
    if others:
        text = text + "\n\n" + "\n".join(f"Attached file: {path}" for path in others)
    items: list[dict[str, Any]] = [{"type": "text", "text": text, "text_elements": []}]
    items += [{"type": "localImage", "path": path} for path in images]
    return items
