"""`generate`: one prompt, one answer as a string, in a session the app never sees.

What flows in: `SessionOptions` and a prompt. What flows out: the text of
the turn that prompt started (its `TextDelta`s joined, in order), or a
`CorralError`. On the line protocol that is `{"id": N, "ok": "the text"}`.

The session is a throwaway, and these are its invariants:

- It continues nothing: `resume`, `fork` and `fork_at` are
  `InvalidConfiguration`, and so are a permission mode other than `Ask`
  and a policy file (nobody could answer what they would forward, and
  nothing they allow may run).
- Its agent runs with no tools where the wire allows (`LaunchSpec.tools`;
  a source that can says so with `CatalogEntry.disables_tools`: Claude's
  `--tools ""`). Its policy, `Decline`, answers every permission request
  itself (`DenyOnce`, else `DenyAlways`; recorded as decided by
  "generate") and every question that takes free text with empty text,
  so nothing waits on the app. A wire that can neither turn its tools off
  nor ask permission is `UnsupportedFeature`: its tools would run unasked.
- The answer is `ProtocolFailed` as soon as the agent shows a tool call
  (a declined one too: `generate` is text only) or a request `Decline`
  cannot answer, and when the turn ends other than `Completed`.
- The app sink is the `Collector` below, so no event, session error or
  `closed` of this session reaches the line protocol, and the runtime
  answers `UnknownSession` to its id. The transcript archive and the
  metrics get it like any session's (they are the Runtime's sinks): the
  archive keeps what the agent did, including each declined request.
- However `generate` ends (answer, failure or cancellation at shutdown),
  the session is closed, which stops its agent (EOF, TERM, KILL within
  the close grace).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs

from ..pipeline.channels import Channel
from ..pipeline.commands import PermissionMode, SessionOptions
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import (
    Capability,
    Completed,
    Event,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    PromptOrigin,
    QuestionRequest,
    QuestionsAnswer,
    Request,
    RequestOpened,
    TextAnswer,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    stop_to_wire,
)
from ..pipeline.policy import Decide, Forward, PolicyContext, Verdict
from ..pipeline.records import Decider, SinkItem

if TYPE_CHECKING:
    from ..sources.catalog import CatalogEntry
    from .handle import Session
    from .runtime import Runtime

__all__ = ["Collector", "Decline", "generate_text"]

DECIDED_BY = Decider.GENERATE
_DENIAL = "generate runs without tools: answer in text only"


@attrs.frozen
class Decline:
    """The policy of a `generate` session: nothing is allowed, nothing waits."""

    def decide(self, request: Request, context: PolicyContext) -> Verdict:
        match request:
            case PermissionRequest(options=options):
                for choice in (PermissionChoice.DENY_ONCE, PermissionChoice.DENY_ALWAYS):
                    if choice in options:
                        answer = PermissionAnswer(choice)
                        return Decide(answer=answer, decided_by=DECIDED_BY, message=_DENIAL)
            case QuestionRequest(questions=questions):
                if all(q.allows_free_text or not q.choices for q in questions):
                    empty = QuestionsAnswer(tuple(TextAnswer("") for _ in questions))
                    return Decide(answer=empty, decided_by=DECIDED_BY)
        return Forward(reason=DECIDED_BY)  # reaches the Collector, which fails the answer


@attrs.define
class _Turn:
    texts: list[str] = attrs.field(factory=list)
    problem: str | None = None  # the first thing generate cannot accept
    ended: TurnEnded | None = None


class Collector:
    """The app sink of a `generate` session: it keeps, per turn, what the answer needs.

    It only records (never blocks the session); `answer` waits on what it
    recorded. Which turn is the prompt's is known from `TurnStarted`'s
    origin, which may arrive before `prompt` has returned the prompt id.
    """

    name = "generate"

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}
        self._prompted: dict[str, str] = {}  # prompt id -> turn id
        self._changed = asyncio.Event()
        self._finished = False

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for item in items_in:
            if isinstance(item, Event) and item.turn_info is not None:
                self._record(item.turn_info.id, item)
        self._finished = True
        self._changed.set()

    def _record(self, turn_id: str, event: Event) -> None:
        turn = self._turns.setdefault(turn_id, _Turn())
        match event.kind:
            case TurnStarted(origin=PromptOrigin(prompt_id=prompt_id)):
                self._prompted[prompt_id] = turn_id
            case TextDelta(text=text):
                turn.texts.append(text)
            case ToolUpdated() | ToolOutputDelta():
                turn.problem = turn.problem or "the agent used a tool"
            case RequestOpened(request=request):
                what = "question" if isinstance(request, QuestionRequest) else "permission request"
                turn.problem = turn.problem or f"the agent sent a {what} generate cannot answer"
            case TurnEnded() as ended:
                turn.ended = ended
            case _:
                return
        self._changed.set()

    async def answer(self, prompt_id: str) -> str:
        """The prompt's answer once its turn ends, or ProtocolFailed at the first problem."""
        while True:
            self._changed.clear()
            turn_id = self._prompted.get(prompt_id)
            turn = None if turn_id is None else self._turns[turn_id]
            if turn is not None and turn.problem is not None:
                raise CorralError(ErrorKind.PROTOCOL_FAILED, f"generate failed: {turn.problem}")
            if turn is not None and turn.ended is not None:
                stop = turn.ended.stop
                if not isinstance(stop, Completed):
                    raise CorralError(
                        ErrorKind.PROTOCOL_FAILED,
                        f"generate failed: the turn ended {stop!r}, not Completed",
                        stop=stop_to_wire(stop),
                    )
                return "".join(turn.texts)
            if self._finished:
                raise CorralError(
                    ErrorKind.PROTOCOL_FAILED,
                    "generate failed: the session ended before the answer",
                )
            await self._changed.wait()


def check_options(spec: SessionOptions) -> SessionOptions:
    """The options as a `generate` session runs them, or InvalidConfiguration."""
    for name in ("resume", "fork", "fork_at", "policy"):
        if getattr(spec, name) is not None:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"generate runs a new session of its own and takes no {name!r}",
                option=name,
            )
    if spec.permission_mode not in (None, PermissionMode.ASK):
        raise CorralError(
            ErrorKind.INVALID_CONFIGURATION,
            f"generate declines every permission itself; permission_mode "
            f"{spec.permission_mode.value!r} cannot apply",
            option="permission_mode",
        )
    return attrs.evolve(spec, permission_mode=PermissionMode.ASK, show_auto_decisions=False)


def _check_supported(session: Session, entry: CatalogEntry) -> None:
    """Tools off, or every tool asks (and is declined): else they would run unasked."""
    info = session.info()  # the capabilities the handshake reported
    if entry.disables_tools or Capability.PERMISSIONS in info.details.capabilities:
        return
    raise CorralError(
        ErrorKind.UNSUPPORTED_FEATURE,
        f"{info.agent.name} can neither run without tools nor ask permission: "
        "generate could not keep its tools from running",
        feature="Permissions",
    )


async def generate_text(runtime: Runtime, spec: SessionOptions, prompt: str) -> str:
    collector = Collector()
    session, entry = await runtime._start(
        check_options(spec), app_sink=collector, policy=Decline(), tools=False, hidden=True
    )
    try:
        _check_supported(session, entry)
        delivery = await session.prompt(prompt)
        return await collector.answer(delivery.prompt_id)
    finally:
        await session.close()  # a cancelled generate too: its agent is stopped
        await session.wait_closed()  # and its last records are in the archive
