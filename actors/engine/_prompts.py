"""The prompt queue: prompts the session accepted and has not started yet.

Each accepted prompt gets its id here (`p1`, `p2`, ... per session), the
one `TurnStarted`'s origin and the `Prompted` record name. A prompt waits
in FIFO order until the engine starts it, or is offered to the running
turn as a steer: at most one steer waits for the agent's verdict at a time,
and a steer the agent did not take goes back to the head of the queue.
The engine decides when; this component only keeps the order.
"""

from __future__ import annotations

from collections import deque

from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import Delivery, Queued, Steered
from ._state import Pending, QueuedPrompt, Steer

__all__ = ["PromptQueue"]


class PromptQueue:
    def __init__(self) -> None:
        self.waiting: deque[QueuedPrompt] = deque()
        self.steer: Steer | None = None
        self.made = 0

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def make(self, text: str, attachments: tuple[str, ...]) -> QueuedPrompt:
        self.made += 1
        return QueuedPrompt(prompt_id=f"p{self.made}", text=text, attachments=attachments)

    def append(self, queued: QueuedPrompt) -> Delivery:
        self.waiting.append(queued)
        return Delivery(prompt_id=queued.prompt_id, kind=Queued(len(self.waiting) - 1))

    def pop(self) -> QueuedPrompt:
        return self.waiting.popleft()

    def remove(self, prompt_id: str) -> None:
        for queued in self.waiting:
            if queued.prompt_id == prompt_id:
                self.waiting.remove(queued)
                return
        raise CorralError(ErrorKind.INVALID_REQUEST, f"prompt {prompt_id} is not queued")

    def clear(self) -> None:
        self.waiting.clear()

    def drop_all(self) -> None:
        """A cancel that clears the queue: a steer still waiting for its verdict goes too."""
        self.waiting.clear()
        steer = self.steer
        if steer is not None:
            self.drop_steer(
                CorralError(
                    ErrorKind.INVALID_REQUEST,
                    f"prompt {steer.prompt.prompt_id} was dropped by cancel "
                    "before the agent took it",
                )
            )

    # ---- the steer -------------------------------------------------------------

    def hold_steer(self, queued: QueuedPrompt) -> Pending:
        assert self.steer is None, "one steer at a time"
        self.steer = Steer(prompt=queued, reply=Pending())
        return self.steer.reply

    def steer_to_send(self) -> QueuedPrompt | None:
        """The steer not yet sent to the agent, now marked sent."""
        steer = self.steer
        if steer is None or steer.sent:
            return None
        steer.sent = True
        return steer.prompt

    def requeue_steer(self) -> None:
        """A steer the agent did not take goes back to the head of the queue."""
        steer, self.steer = self.steer, None
        if steer is not None:
            self.waiting.appendleft(steer.prompt)
            steer.reply.resolve(Delivery(prompt_id=steer.prompt.prompt_id, kind=Queued(0)))

    def settle_steer(self, prompt_id: str, turn_id: str | None) -> bool:
        """The agent's verdict on the steer `prompt_id`: taken into `turn_id`, or not (None).

        True when the agent took it. A verdict for a steer already settled
        (by the turn's end, say) changes nothing.
        """
        steer = self.steer
        if steer is None or steer.prompt.prompt_id != prompt_id:
            return False
        if turn_id is None:
            self.requeue_steer()
            return False
        self.steer = None
        steer.reply.resolve(Delivery(prompt_id=prompt_id, kind=Steered(turn_id)))
        return True

    def drop_steer(self, error: CorralError) -> None:
        steer, self.steer = self.steer, None
        if steer is not None:
            steer.reply.fail(error)
