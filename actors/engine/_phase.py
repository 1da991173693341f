"""The turn phase: every transition in one table, after h11's state machine.

A session is, at any moment, in exactly one `Phase`. The engine changes it
only by firing a `Trigger` at the `PhaseMachine`, which looks the pair up
in `TRANSITIONS`:

```
            START                CONFIRM
   IDLE ─────────────► STARTING ─────────► RUNNING
    │ ▲                   │ CANCEL            │ CANCEL
    │ │ END (from any     ▼        CONFIRM    ▼
    │ │ turn phase)  CANCELLING_UNCONFIRMED ─► CANCELLING
    │ └──────────────────────────────────────────┘
    │ OPEN (agent content while idle)  ─► RUNNING
    └─ CLOSE ─► CLOSED (terminal)
```

Invariants (every rule of ENGINE.md about turns rests on them):
- a turn exists exactly when the phase is one of `TURN_PHASES`; so at most
  one turn runs, and a turn that was started leaves through `END` once:
  one `TurnEnded` per `TurnStarted`;
- "confirmed" (the wire acknowledged the turn, or the agent opened it by
  speaking) is `RUNNING` or `CANCELLING`; before that, what arrives belongs
  to the previous turn and is dropped, and a turn end is a late one;
- a cancelled turn stays cancelled until it ends: `CANCEL` is fired once per
  turn, and no steer joins it;
- `CLOSED` is entered only from `IDLE` (the running turn ends first) and
  never left: no turn starts after the session closed or failed;
- a pair that is not in the table is a bug in corral, not in the agent:
  the machine raises `EngineBug` and stays `BROKEN`; every later trigger
  raises again (once broken, stays broken).
"""

from __future__ import annotations

import enum

__all__ = ["TRANSITIONS", "TURN_PHASES", "EngineBug", "Phase", "PhaseMachine", "Trigger"]


class EngineBug(RuntimeError):
    """The engine was asked for a transition its table does not allow."""


class Phase(enum.Enum):
    IDLE = "idle"  # no turn
    STARTING = "starting"  # a turn was opened and sent; the wire has not confirmed it
    RUNNING = "running"  # the wire confirmed the turn (or the agent opened it)
    CANCELLING_UNCONFIRMED = "cancelling_unconfirmed"  # interrupted before confirmation
    CANCELLING = "cancelling"  # interrupted; the wire has the cancel grace to end it
    CLOSED = "closed"  # the session is over (closed by the app, or failed)
    BROKEN = "broken"  # a transition outside the table happened


class Trigger(enum.Enum):
    START = "start"  # the engine opened a turn and sent it (prompt, compact, agent)
    OPEN = "open"  # agent content arrived while idle: a turn already running
    CONFIRM = "confirm"  # the wire said the turn began
    CANCEL = "cancel"  # the engine sent an interrupt
    END = "end"  # the turn ended, whatever ended it
    CLOSE = "close"  # the session closed or failed


TURN_PHASES = frozenset(
    {Phase.STARTING, Phase.RUNNING, Phase.CANCELLING_UNCONFIRMED, Phase.CANCELLING}
)

TRANSITIONS: dict[tuple[Phase, Trigger], Phase] = {
    (Phase.IDLE, Trigger.START): Phase.STARTING,
    (Phase.IDLE, Trigger.OPEN): Phase.RUNNING,
    (Phase.IDLE, Trigger.CLOSE): Phase.CLOSED,
    (Phase.STARTING, Trigger.CONFIRM): Phase.RUNNING,
    (Phase.STARTING, Trigger.CANCEL): Phase.CANCELLING_UNCONFIRMED,
    (Phase.RUNNING, Trigger.CANCEL): Phase.CANCELLING,
    (Phase.CANCELLING_UNCONFIRMED, Trigger.CONFIRM): Phase.CANCELLING,
    **{(phase, Trigger.END): Phase.IDLE for phase in TURN_PHASES},
}


class PhaseMachine:
    """The current phase; `fire` is the only way to change it."""

    __slots__ = ("phase",)

    def __init__(self) -> None:
        self.phase = Phase.IDLE

    def fire(self, trigger: Trigger) -> Phase:
        following = TRANSITIONS.get((self.phase, trigger))
        if following is None:
            was, self.phase = self.phase, Phase.BROKEN
            raise EngineBug(f"no transition from {was.name} on {trigger.name}")
        self.phase = following
        return following

    def check(self) -> None:
        """Raise if the machine broke earlier: a broken engine takes no more input."""
        if self.phase is Phase.BROKEN:
            raise EngineBug("the engine broke on an earlier transition")

    @property
    def in_turn(self) -> bool:
        return self.phase in TURN_PHASES

    @property
    def confirmed(self) -> bool:
        return self.phase in (Phase.RUNNING, Phase.CANCELLING)

    @property
    def cancelling(self) -> bool:
        return self.phase in (Phase.CANCELLING, Phase.CANCELLING_UNCONFIRMED)
