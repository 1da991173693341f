"""Wire problems: what an agent wrote that is not its protocol, typed and counted.

A decoder never drops a bad line: it hands up a `WireProblem` whose `kind`
is one of a closed set, the same set the `corral_decode_errors_total`
metric labels by (a kind outside it would read as "other"):

- `NOT_JSON`: the line is not a JSON object (bad JSON, or a bare value);
- `OVERSIZED`: the line was longer than the cap and was skipped unread;
- `BAD_SHAPE`: valid JSON that is not a message of the wire (a response to
  no request of ours, a frame whose fields do not fit).

The kind (`ProblemKind`, part of the driver contract in
`pipeline/driver.py`) is decided where the problem is found, never guessed
later from a message's wording. `WireProblem.event` makes the one Warning
`Diagnostic` a source reports (`Emitted.problem` = the kind, the raw prefix
under the source's raw key). `tally` is the one place the session's
telemetry counts problems and unknown frames: every event a driver sends
passes it, so each is counted once, on its way out.
"""

from __future__ import annotations

import attrs

from ...pipeline.decoding import NotJson, Oversized
from ...pipeline.driver import DriverEvent, Emitted, ProblemKind
from ...pipeline.events import Diagnostic, DiagnosticLevel
from ...pipeline.telemetry import SessionTelemetry

__all__ = ["ProblemKind", "WireProblem", "tally"]


@attrs.frozen(kw_only=True)
class WireProblem:
    """A line that is not a message of the wire; `raw` is a bounded prefix.

    `request_id`: the line looks like a request (a `method` and an `id` in
    its prefix) that JSON could not read; the driver answers that id with a
    parse error, so the agent does not wait forever for an answer.
    """

    kind: ProblemKind
    reason: str
    raw: str = ""
    request_id: int | str | None = None

    @classmethod
    def from_decoder(
        cls, item: NotJson | Oversized, request_id: int | str | None = None
    ) -> WireProblem:
        if isinstance(item, Oversized):
            reason = f"a line of {item.length} bytes was too long"
            return cls(kind=ProblemKind.OVERSIZED, reason=reason)
        return cls(
            kind=ProblemKind.NOT_JSON, reason=item.reason, raw=item.prefix, request_id=request_id
        )

    def event(self, *, speaker: str, wire: str, raw_key: str) -> Emitted:
        """The Warning a source reports: "`speaker` wrote a line that is not `wire`"."""
        note = Diagnostic(
            level=DiagnosticLevel.WARNING,
            message=f"{speaker} wrote a line that is not {wire}: {self.reason}",
        )
        return Emitted(kind=note, problem=self.kind, extensions={raw_key: self.raw})


def tally(telemetry: SessionTelemetry, *events: DriverEvent) -> None:
    """Count the events that report a wire problem or an unknown frame (a batch's in one
    call: most of a stream reports neither)."""
    for event in events:
        if not isinstance(event, Emitted):
            continue
        if event.unknown_frame is not None:
            telemetry.unknown_frame()
        if event.problem is not None:
            telemetry.decode_error(event.problem.value)
