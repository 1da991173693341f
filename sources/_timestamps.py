"""ISO 8601 timestamps, as agents write them in transcripts and events, read as nanoseconds.

Copilot's session events and transcripts and Gemini's chat files stamp
their entries with ISO 8601 strings, usually in UTC with a trailing `Z`
(which `fromisoformat` reads once it is spelled `+00:00`). A stamp without
an offset is taken as UTC. The count is exact: the difference from the
epoch is taken in whole microseconds (the resolution of `datetime`) and
scaled, never through float seconds, so a stamp read twice compares equal
to the nanosecond. Anything that is not a readable stamp gives `None`.
"""

from __future__ import annotations

import datetime

__all__ = ["iso_ns"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def iso_ns(stamp: object) -> int | None:
    """Nanoseconds since the epoch of an ISO 8601 stamp, or None if it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return (moment - _EPOCH) // datetime.timedelta(microseconds=1) * 1000
