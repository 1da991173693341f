"""Where the engine's decisions go: the outbox (for the sinks) and the driver.

`outbox` holds, in order, everything one session tells its sinks (see
`pipeline/records.py`): `Opened` first; then the events, each numbered
here (`sequence` starts at 1 and grows by exactly one per event, and by
nothing else), with a `Prompted` record before the events of each prompt
and a `Decision` record per request; then at most one `SessionFailed` and
exactly one `Closed`. The session records are made here and nowhere else:
the actor and the replay only carry them. `to_driver` holds the
commands for the agent; once the session failed nobody listens, so they
are muted. Nothing here decides; the actor (or the replay) drains both
after every input.

Time: each event's `occurred_at` is a reading of the wall clock when the
engine made it, except that what the engine makes from one batch of driver
events (one read of the agent's output, handled at once) shares one reading
(`batch_time`): they were produced together, and order is `sequence`'s.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping

from ...pipeline.driver import DriverCommand, Emitted
from ...pipeline.errors import CorralError
from ...pipeline.events import EventKind, SessionInfo, SystemTime, TurnContext, new_event
from ...pipeline.extensions import wire_extensions
from ...pipeline.records import Closed, CloseReason, Opened, Prompted, SessionFailed, SinkItem
from ._state import QueuedPrompt

__all__ = ["Output"]


class Output:
    def __init__(self, *, session_id: str, wall_clock_ns: Callable[[], int]) -> None:
        self.session_id = session_id
        self.wall_clock_ns = wall_clock_ns
        self.outbox: deque[SinkItem] = deque()
        self.to_driver: deque[DriverCommand] = deque()
        self.sequence = 0
        self.muted = False  # the agent is gone: commands go nowhere
        self.ended = False  # `Closed` was recorded
        self._batch_time: SystemTime | None = None  # while a batch is handled

    def now_wall(self) -> SystemTime:
        if self._batch_time is not None:
            return self._batch_time
        secs, nanos = divmod(self.wall_clock_ns(), 1_000_000_000)
        return SystemTime(secs, nanos)

    @contextlib.contextmanager
    def batch_time(self) -> Iterator[None]:
        """Within: one reading of the clock for everything made (see the header)."""
        self._batch_time = self.now_wall()
        try:
            yield
        finally:
            self._batch_time = None

    def emit(
        self,
        kind: EventKind,
        *,
        turn_info: TurnContext | None,
        extensions: Mapping[str, object] | None = None,
        said: Emitted | None = None,
    ) -> None:
        """The next event; `said`: the driver event it comes from, if any."""
        self.sequence += 1
        # The kind's JSON, if a channel measured the driver's event on its way in.
        encoded = said.encoded_kind() if said is not None and said.kind is kind else None
        # Within a batch, the batch's one reading of the clock (see `batch_time`).
        at = now if (now := self._batch_time) is not None else self.now_wall()
        extended = wire_extensions(said, extensions)
        self.outbox.append(
            new_event(self.sequence, self.session_id, kind, at, turn_info, extended, encoded)
        )

    def record(self, item: SinkItem) -> None:
        """A record without a sequence number (a prompt, a decision, the session's ends)."""
        self.outbox.append(item)

    # ---- the session records: made here and nowhere else -----------------------

    def opened(self, info: SessionInfo, session_dir: str) -> None:
        assert not self.outbox and self.sequence == 0, "Opened comes first"
        self.outbox.append(Opened(info=info, at=self.now_wall(), dir=session_dir))

    def prompted(self, queued: QueuedPrompt) -> None:
        self.outbox.append(
            Prompted(
                session_id=self.session_id,
                prompt_id=queued.prompt_id,
                text=queued.text,
                attachments=queued.attachments,
                at=self.now_wall(),
            )
        )

    def closed(self, failure: CorralError | None, turns: int) -> None:
        """The last records: the session's error (if it failed), then `Closed`, once."""
        assert not self.ended, "Closed comes once"
        self.ended = True
        if failure is not None:
            self.outbox.append(SessionFailed(session_id=self.session_id, error=failure))
        self.outbox.append(
            Closed(
                session_id=self.session_id,
                reason=CloseReason.CLOSED if failure is None else CloseReason.FAILED,
                at=self.now_wall(),
                events=self.sequence,
                turns=turns,
            )
        )

    def command(self, command: DriverCommand) -> None:
        if not self.muted:
            self.to_driver.append(command)
