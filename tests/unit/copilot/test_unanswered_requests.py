"""Copilot's waiting request events: each one corral does not serve has its decline.

The live path (a fake Copilot, the turn going on to its end) is in
`tests/integration/test_unanswered_requests.py`; here, the table itself.
"""

from __future__ import annotations

import pytest
from corral.pipeline.events import Diagnostic, DiagnosticLevel
from corral.sources.copilot._declines import DECLINES, decline_for
from corral.sources.copilot._known import SCHEMA_EVENT_TYPES
from corral.sources.copilot._normalize import CopilotNormalizer

# Waiting requests corral surfaces to the app instead of declining.
SURFACED = {"permission.requested", "user_input.requested"}


def test_every_waiting_request_of_the_seed_is_surfaced_or_declined() -> None:
    waiting = {t for t in SCHEMA_EVENT_TYPES if t.endswith((".requested", "_required"))}
    assert waiting == SURFACED | set(DECLINES)


@pytest.mark.parametrize("event_type", sorted(DECLINES))
def test_a_waiting_request_is_declined_with_its_request_id_and_a_warning(event_type: str) -> None:
    event = {"type": event_type, "data": {"requestId": "r7"}}
    decline = decline_for(event)
    assert decline is not None
    assert decline.method == DECLINES[event_type][0]
    assert decline.params["requestId"] == "r7"
    note = decline.note.kind
    assert isinstance(note, Diagnostic) and note.level is DiagnosticLevel.WARNING
    assert decline.note.extensions["corral/declined"] == event_type
    assert decline.note.extensions["copilot/raw_frame"] == event


@pytest.mark.parametrize(
    "event",
    [
        {"type": "permission.requested", "data": {"requestId": "r1"}},
        {"type": "assistant.message", "data": {"content": "hi"}},
        {"type": "elicitation.requested", "data": {}},  # no request id: nothing to answer
        "not an event",
    ],
)
def test_other_events_are_not_declined(event: object) -> None:
    assert decline_for(event) is None


def test_a_replay_never_declines_it_only_reports() -> None:
    """The normalizer (shared with replays) still turns the event into a Diagnostic."""
    event = {"type": "sampling.requested", "data": {"requestId": "r1", "serverName": "s"}}
    (note,) = CopilotNormalizer().feed(event)
    assert isinstance(note.kind, Diagnostic)  # type: ignore[union-attr]
