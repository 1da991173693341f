"""One session's records in, counters and histograms out.

`SessionMetrics` is sans-IO: `observe(record)` for each record of the
session's ordered stream (`Opened`, `Event`s and `Decision`s, at most one
`SessionFailed`, one `Closed`), then `finish()`. `MetricsSink` is the stage
that feeds it from the session's bounded channel; it never blocks on
anything but that channel, so it never slows the session down.

Durations come from the records' own timestamps (`occurred_at`,
`Decision.waited_seconds`), so they are what the engine saw, whatever the
queueing between the engine and this sink. Ids (session, turn, tool,
request) ride on exemplars, never on labels.

Gauges (active sessions, status, running turns and tools, pending
requests) go up and down in pairs: `finish()` takes back whatever is still
counted when the stream ends, including when it ends without `Closed`
(the session crashed, or its task was cancelled); such a session ends with
outcome "aborted".

What an event reports beside its kind (tokens used since the previous
report, the model, whether corral decided a request) is read through
`pipeline/extensions.py`, never off the dictionary. `cost_usd` is the
session's running total, so the counter adds each increase (a drop
means the agent restarted its count: the new value is counted whole, as
Prometheus treats counter resets).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...pipeline.channels import Channel
from ...pipeline.events import (
    AgentOrigin,
    Completed,
    CompletionSource,
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    Event,
    Mcp,
    MessageEnded,
    PermissionRequest,
    PlanUpdated,
    ReasoningDelta,
    RequestOpened,
    StatusChanged,
    SystemTime,
    TextDelta,
    ToolOutputDelta,
    ToolUpdate,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from ...pipeline.extensions import marked_decision, reported_model, reported_tokens
from ...pipeline.records import Closed, Decision, Opened, SessionFailed, SinkItem
from ._families import Families
from ._labels import (
    DECISIONS,
    OUTCOMES,
    REQUEST_KINDS,
    TOOL_KINDS,
    LabelCap,
    closed,
    decided_by_label,
    exemplar_labels,
)

__all__ = ["MetricsSink", "SessionMetrics"]

_OUTPUT_KINDS: frozenset[type] = frozenset(
    {TextDelta, ReasoningDelta, ToolUpdated, ToolOutputDelta, PlanUpdated, RequestOpened}
)
_COUNTED_ONLY: frozenset[type] = frozenset(
    {TextDelta, ReasoningDelta, UserMessage, ToolOutputDelta, MessageEnded, PlanUpdated}
)
_FINISHED_MEMORY = 4096  # finished tool ids remembered, to ignore their late snapshots


def _tool_kind(tool: ToolUpdate) -> str:
    return "Mcp" if isinstance(tool.kind, Mcp) else tool.kind.value


class _Turn:
    __slots__ = ("id", "output_seen", "started")

    def __init__(self, turn_id: str, started: float) -> None:
        self.id = turn_id
        self.started = started
        self.output_seen = False


class SessionMetrics:
    def __init__(
        self,
        families: Families,
        *,
        session_id: str,
        agent: str,
        models: LabelCap,
        wall_clock: Callable[[], float],
        on_finish: Callable[[], None] | None = None,
    ) -> None:
        self._m = families
        self._on_finish = on_finish
        self._session_id = session_id
        self._agent = agent
        self._models = models
        self._clock = wall_clock
        self._opened_at: float | None = None
        self._status: str | None = None
        self._turn: _Turn | None = None
        self._tools: dict[str, tuple[str, float]] = {}  # running: id -> (kind, first seen)
        self._finished_tools: dict[str, None] = {}
        self._shown: dict[str, str] = {}  # requests the app sees: id -> request kind
        self._model = "unknown"
        self._cost = 0.0
        self._outcome: str | None = None
        self._kind_labels: dict[type, tuple[str, str]] = {}
        self._finished = False

    # ---- records -------------------------------------------------------------

    def observe(self, item: SinkItem) -> None:
        self.observe_batch((item,))

    def observe_batch(self, batch: Sequence[SinkItem]) -> None:
        """Records in order. A batch arrives at once: its events are added up
        (`_Tally`) and recorded together, against one clock reading."""
        now = self._clock()
        tally = _Tally()
        for item in batch:
            if type(item) is Event:
                self._event(item, tally)
            else:
                self._add_up(tally, now)
                self._record(item)
        self._add_up(tally, now)

    def _add_up(self, tally: _Tally, now: float) -> None:
        tally.settle()
        for labels, count in tally.kinds.items():
            self._m.events.inc(labels, float(count))
        for occurred, count in tally.times.items():
            self._m.delivery.observe((), max(0.0, now - occurred.seconds), times=count)
        tally.kinds.clear()
        tally.times.clear()

    def _record(self, item: SinkItem) -> None:
        match item:
            case Decision():
                self._decision(item)
            case Opened(info=info, at=at):
                self._opened_at = at.seconds
                self._status = info.status.value
                self._m.sessions_started.inc((self._agent,))
                self._m.sessions_active.add((self._agent,), 1)
                self._m.sessions_in_status.add((self._agent, self._status), 1)
            case SessionFailed(error=error):
                self._m.agent_errors.inc((self._agent, error.kind.value), exemplar=self._ids())
            case Closed(reason=reason, at=at):
                self._outcome = closed(reason, OUTCOMES)
                if self._opened_at is not None:
                    self._m.session_duration.observe(
                        (self._agent,), max(0.0, at.seconds - self._opened_at), self._ids()
                    )
                self.finish()

    def finish(self) -> None:
        """The stream ended: take back every gauge still counted. Idempotent."""
        if self._finished:
            return
        self._finished = True
        if self._on_finish is not None:
            self._on_finish()
        agent = (self._agent,)
        if self._opened_at is None:
            return
        self._m.sessions_ended.inc((self._agent, self._outcome or "aborted"), exemplar=self._ids())
        self._m.sessions_active.add(agent, -1)
        if self._status is not None:
            self._m.sessions_in_status.add((self._agent, self._status), -1)
        if self._turn is not None:
            self._m.turns_running.add(agent, -1)
        for kind, _ in self._tools.values():
            self._m.tools_finished.inc((self._agent, kind, "Unfinished"))
        if self._tools:
            self._m.tools_running.add(agent, -len(self._tools))
        for request_kind in self._shown.values():
            self._m.requests_pending.add((self._agent, request_kind), -1)
        self._tools.clear()
        self._shown.clear()

    def _ids(self, **ids: str | None) -> dict[str, str]:
        return exemplar_labels(session_id=self._session_id, **ids)

    # ---- events --------------------------------------------------------------

    def _event(self, event: Event, tally: _Tally) -> None:
        kind = event.kind
        kind_type = type(kind)
        occurred = event.occurred_at
        labels = self._kind_labels.get(kind_type)
        if labels is None:
            labels = self._kind_labels[kind_type] = (self._agent, kind_type.__name__)
        tally.kinds[labels] = tally.kinds.get(labels, 0) + 1
        if occurred is tally.last:  # a batch's events share one time: counted apart
            tally.last_count += 1
        elif occurred.secs > 0:
            tally.switch(occurred)
        if kind_type in _OUTPUT_KINDS and (turn := self._turn) is not None and not turn.output_seen:
            self._first_output(event, turn)  # the turn's first output: once a turn
        if kind_type in _COUNTED_ONLY:
            return  # the bulk of a stream (deltas): nothing more to learn
        at = occurred.seconds
        match kind:
            case TurnStarted(origin=origin):
                self._turn_started(event, origin, at)
            case TurnEnded():
                self._turn_ended(event, kind, at)
            case ToolUpdated(tool=tool):
                self._tool(tool, at)
            case RequestOpened(request=request):
                self._request_opened(event, request)
            case ContextUsage():
                self._usage(kind, event)
            case StatusChanged(status=status):
                if self._status is not None:
                    self._m.sessions_in_status.add((self._agent, self._status), -1)
                self._status = status.value
                self._m.sessions_in_status.add((self._agent, self._status), 1)
            case ContextCompacted():
                self._m.compactions.inc((self._agent,))
            case Diagnostic(level=level):
                self._m.diagnostics.inc((self._agent, level.value))

    def _turn_started(self, event: Event, origin: object, at: float) -> None:
        label = "agent" if isinstance(origin, AgentOrigin) else "prompt"
        self._m.turns_started.inc((self._agent, label))
        if self._turn is None:
            self._m.turns_running.add((self._agent,), 1)
        turn_id = event.turn_info.id if event.turn_info is not None else ""
        self._turn = _Turn(turn_id, at)

    def _turn_ended(self, event: Event, ended: TurnEnded, at: float) -> None:
        stop = type(ended.stop).__name__
        turn_id = event.turn_info.id if event.turn_info is not None else None
        ids = self._ids(turn_id=turn_id)
        self._m.turns_ended.inc((self._agent, stop), exemplar=ids)
        if isinstance(ended.stop, Completed) and ended.stop.source is CompletionSource.INFERRED:
            self._m.turns_inferred.inc((self._agent,))
        turn = self._turn
        if turn is None:
            return
        self._m.turns_running.add((self._agent,), -1)
        self._turn = None
        if turn_id is None or turn.id == turn_id:
            self._m.turn_duration.observe((self._agent, stop), max(0.0, at - turn.started), ids)

    def _first_output(self, event: Event, turn: _Turn) -> None:
        if event.turn_info is None or event.turn_info.id != turn.id:
            return
        turn.output_seen = True
        at = event.occurred_at.seconds
        self._m.first_output.observe(
            (self._agent,), max(0.0, at - turn.started), self._ids(turn_id=turn.id)
        )

    def _tool(self, tool: ToolUpdate, at: float) -> None:
        if tool.id in self._finished_tools:
            return  # a late snapshot of a call already counted
        running = self._tools.get(tool.id)
        if running is None:
            kind = _tool_kind(tool)
            self._m.tools_started.inc((self._agent, kind))
            if not tool.status.finished:
                self._tools[tool.id] = (kind, at)
                self._m.tools_running.add((self._agent,), 1)
        if not tool.status.finished:
            return
        ids = self._ids(tool_id=tool.id)
        if running is not None:
            kind, started = running
            del self._tools[tool.id]
            self._m.tools_running.add((self._agent,), -1)
            self._m.tool_duration.observe((self._agent, kind), max(0.0, at - started), ids)
        else:
            kind = _tool_kind(tool)
        self._m.tools_finished.inc((self._agent, kind, tool.status.value), exemplar=ids)
        self._finished_tools[tool.id] = None
        if len(self._finished_tools) > _FINISHED_MEMORY:
            del self._finished_tools[next(iter(self._finished_tools))]

    # ---- requests ------------------------------------------------------------

    def _request_opened(self, event: Event, request: object) -> None:
        if marked_decision(event) is not None:
            return  # decided by corral and only shown: counted with its Decision
        if isinstance(request, PermissionRequest):
            request_kind, tool_kind = "Permission", _tool_kind(request.tool)
        else:
            request_kind, tool_kind = "Question", "none"
        request_id: str = getattr(request, "id", "")
        if request_id in self._shown:
            return
        self._shown[request_id] = request_kind
        self._m.requests.inc((self._agent, request_kind, tool_kind))
        self._m.requests_pending.add((self._agent, request_kind), 1)

    def _decision(self, decision: Decision) -> None:
        request_kind = closed(decision.request_kind, REQUEST_KINDS)
        shown = self._shown.pop(decision.request_id, None)
        if shown is not None:
            self._m.requests_pending.add((self._agent, shown), -1)
        else:
            tool_kind = closed(decision.tool_kind or "none", TOOL_KINDS)
            self._m.requests.inc((self._agent, request_kind, tool_kind))
        decided_by = decided_by_label(decision.decided_by)
        ids = self._ids(request_id=decision.request_id)
        verdict = closed(decision.decision, DECISIONS)
        self._m.decisions.inc((self._agent, request_kind, verdict, decided_by), exemplar=ids)
        if shown is not None:  # only a request shown to the app waits for it
            self._m.request_wait.observe(
                (self._agent, request_kind), max(0.0, decision.waited_seconds), ids
            )

    # ---- usage ---------------------------------------------------------------

    def _usage(self, usage: ContextUsage, event: Event) -> None:
        model = reported_model(event)
        if model is not None:
            self._model = self._models(model)
        tokens = reported_tokens(event)
        if tokens is not None:
            for token_type, count in tokens.counts().items():
                if count > 0:
                    self._m.tokens.inc((self._agent, self._model, token_type), float(count))
        if usage.cost_usd is not None and usage.cost_usd >= 0:
            spent = usage.cost_usd - self._cost if usage.cost_usd >= self._cost else usage.cost_usd
            self._cost = usage.cost_usd
            if spent > 0:
                self._m.cost.inc((self._agent, self._model), spent)
        if usage.window_tokens:
            self._m.context_ratio.observe((self._agent,), usage.used_tokens / usage.window_tokens)


class _Tally:
    """A batch's events added up: per kind (the events counter) and per time
    made (the delivery histogram: events made at once were delivered at once)."""

    __slots__ = ("kinds", "last", "last_count", "times")

    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str], int] = {}
        self.times: dict[SystemTime, int] = {}
        # The latest time and its events, not yet in `times` (no hashing while it lasts).
        self.last: SystemTime | None = None
        self.last_count = 0

    def switch(self, occurred: SystemTime) -> None:
        """The events from here on were made at `occurred`."""
        self.settle()
        self.last, self.last_count = occurred, 1

    def settle(self) -> None:
        """`times` complete: the latest time's events in it too."""
        if self.last is not None:
            self.times[self.last] = self.times.get(self.last, 0) + self.last_count
            self.last, self.last_count = None, 0


class MetricsSink:
    """The stage: reads one session's records until the channel ends."""

    name = "metrics"

    def __init__(self, session: SessionMetrics) -> None:
        self.session = session

    async def run(self, items_in: Channel[SinkItem]) -> None:
        try:
            async for batch in items_in.batches():
                self.session.observe_batch(batch)
        finally:
            self.session.finish()
