"""`query`: one prompt, its turn's events, as claude-agent-sdk's `query` does.

What flows in: a prompt and the session's options (`SessionOptions`: the
agent, the folder, the rest); a Runtime to run in, or none (then `query`
runs its own for the duration). What flows out: the events of the prompt's
turn, ending with its `TurnEnded`. The session is opened for the query and
closed however the iteration ends (finished, broken off, failed); a loop
broken off early closes it when the generator is closed, which
`async with contextlib.aclosing(query(...)) as events:` makes immediate.

Nobody can answer a request in a one-shot query, so a permission request
the policy leaves to the app is yielded, then declined (`DenyOnce`, else
`DenyAlways`): nothing the policy did not allow runs, and nothing waits.
A question is yielded and left unanswered until the turn ends (the agent
decides what an unanswered question means); to answer, open a session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..pipeline.commands import SessionOptions
from ..pipeline.events import (
    Event,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    RequestOpened,
)
from .handle import Session
from .runtime import Runtime

__all__ = ["query"]

_DEFAULT = SessionOptions(agent="claude", dir=".")


async def query(
    *, prompt: str, options: SessionOptions = _DEFAULT, runtime: Runtime | None = None
) -> AsyncIterator[Event]:
    """Open a session, yield the events of `prompt`'s turn, close the session."""
    if runtime is None:
        async with Runtime() as own:
            async for event in _one_turn(own, prompt, options):
                yield event
        return
    async for event in _one_turn(runtime, prompt, options):
        yield event


async def _one_turn(runtime: Runtime, prompt: str, options: SessionOptions) -> AsyncIterator[Event]:
    async with await runtime.open(options) as session:
        async for event in session.turn(prompt):
            yield event
            if isinstance(event.kind, RequestOpened):
                await _decline(session, event.kind)


async def _decline(session: Session, opened: RequestOpened) -> None:
    request = opened.request
    if not isinstance(request, PermissionRequest):
        return  # a question: see the module's header
    for choice in (PermissionChoice.DENY_ONCE, PermissionChoice.DENY_ALWAYS):
        if choice in request.options:
            await session.answer(request.id, PermissionAnswer(choice))
            return
