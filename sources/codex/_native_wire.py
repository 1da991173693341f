"""corral's own `--record-wire` files of Codex, re-normalized (for `corral import`).

The file and what every wire's reading shares: `sources/_recorded_wire.py`.
The wire is the one corral drives live, `codex app-server` (JSON-RPC);
each message goes through the live driver's `AppServerNormalizer`, so an
import of a wire gets what the live session got, as this corral version
normalizes it.

Which wire: our `initialize` (corral's `clientInfo` and the
`experimentalApi` capability), or Codex's answer to it (its `userAgent`
and `codexHome`). The generic app-server agent's wire (`sources/
appserver/`) asks without `experimentalApi` and is not recognized here.

What corral sent, replayed:
- `turn/start` is a prompt: a `PromptSent` (its text input, the line's
  time), and the normalizer expects its `userMessage` item (not news to
  the app), as live; a `turn/steer`'s item is expected the same way;
- the answer to `thread/start` (`thread/resume`, `thread/fork`) names the
  thread and the model, as the live handshake does;
- our answer to one of Codex's requests settles it, so Codex's
  `serverRequest/resolved` is no news, and an approval's decision is the
  app's answer (accept, for the session, decline; cancel is a withdrawal).
Codex's requests and notifications are the normalizer's; the answers to
our other requests carry no events.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...pipeline.driver import PromptSent, ReplayItem
from ...pipeline.events import PermissionChoice
from .._recorded_wire import answered, block_text, read_recorded_wire, recorded
from ._approvals import ServerRequests
from ._appserver import AppServerNormalizer

__all__ = ["read_codex_wire", "recognizes_codex_wire_line"]

_THREAD_METHODS = frozenset({"thread/start", "thread/resume", "thread/fork"})
_PROMPTS = frozenset({"turn/start", "turn/steer"})
ALLOW_ONCE, ALLOW_ALWAYS = PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS
DENY_ONCE = PermissionChoice.DENY_ONCE
# corral's decisions on Codex's approvals (v2, then the legacy ones); cancel / abort: withdrawn
_DECISIONS = {
    "accept": ALLOW_ONCE,
    "acceptForSession": ALLOW_ALWAYS,
    "decline": DENY_ONCE,
    "approved": ALLOW_ONCE,
    "approved_for_session": ALLOW_ALWAYS,
}


def recognizes_codex_wire_line(value: Mapping[str, Any], path: Path) -> bool:
    """One recorded line of Codex's `initialize`: our request, or Codex's answer."""
    sent, received = recorded(value, "out"), recorded(value, "in")
    if sent is not None and sent.get("method") == "initialize":
        params = sent.get("params")
        capabilities = params.get("capabilities") if isinstance(params, dict) else None
        return isinstance(capabilities, dict) and capabilities.get("experimentalApi") is True
    if received is not None and isinstance(result := received.get("result"), dict):
        return isinstance(result.get("userAgent"), str) and "codexHome" in result
    return False


def _choice(result: object) -> PermissionChoice | None:
    """What the app chose, from corral's reply to an approval (None: withdrawn, or not one)."""
    decision = result.get("decision") if isinstance(result, dict) else None
    if isinstance(decision, dict):  # an amendment to the exec policy, or a legacy deny
        return DENY_ONCE if "denied" in decision else ALLOW_ALWAYS
    return _DECISIONS.get(decision) if isinstance(decision, str) else None


class _CodexWire:
    """A recorded app-server wire through `AppServerNormalizer` (a `RecordedWire`)."""

    wire = "a tagged Codex app-server line"
    raw_key = "codex/raw_line"

    def __init__(self) -> None:
        self._normalizer = AppServerNormalizer(wall_clock_ns=lambda: 0)
        self._asked: dict[Any, str] = {}  # our request id -> its method

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]:
        method, params = message.get("method"), message.get("params")
        if method is None and "id" in message:  # our answer to one of Codex's requests
            request_id = ServerRequests.request_id(message["id"])
            self._normalizer.requests.withdraw(request_id)
            return answered(request_id, _choice(message.get("result")))
        if isinstance(method, str) and message.get("id") is not None:
            self._asked[message["id"]] = method
        if method not in _PROMPTS or not isinstance(params, dict):
            return []
        text = block_text(params.get("input"))
        client_id = params.get("clientUserMessageId")
        if isinstance(client_id, str):
            self._normalizer.expect_prompt(client_id, text)
        return [PromptSent(text=text, at_ns=at_ns)] if method == "turn/start" else []

    def received(self, message: dict[str, Any]) -> list[ReplayItem]:
        method, params = message.get("method"), message.get("params")
        if isinstance(method, str) and message.get("id") is not None:
            events, _ = self._normalizer.server_request(message["id"], method, params)
            return list(events)
        if isinstance(method, str):
            return list(self._normalizer.notification(method, params))
        if self._asked.pop(message.get("id"), None) in _THREAD_METHODS:
            self._opened(message.get("result"))
        return []

    def _opened(self, result: object) -> None:
        """The thread and the model, from the answer to `thread/start` (or resume, fork)."""
        if not isinstance(result, dict):
            return
        thread = result.get("thread")
        if isinstance(thread, dict) and isinstance(thread.get("id"), str):
            self._normalizer.thread_id = thread["id"]
        if isinstance(result.get("model"), str):
            self._normalizer.model = result["model"]

    def end(self) -> list[ReplayItem]:
        return []


def read_codex_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    return read_recorded_wire(path, _CodexWire())
