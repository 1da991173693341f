"""The mock agent, played in-process from a script.

It speaks the driver contract directly (there is no wire to decode), which
makes it cheap enough for a thousand sessions in one process, and exact
enough to exercise every engine rule. The player awaits every event it
sends, so a full channel pauses it exactly as a full pipe pauses a real
agent.

Commands arrive through `send`: an interrupt or an answer takes effect at
once (they wake any `Sleep` or `AwaitAnswer`); steer, configure, rollback,
compact and prompts wait in a small inbox that the player serves between
steps.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Protocol

from ...pipeline import driver
from ...pipeline.channels import Channel, EndOfChannel
from ...pipeline.events import (
    AgentDetails,
    Cancelled,
    Capabilities,
    Capability,
    Completed,
    ContextCompacted,
    MessageEnded,
    RequestOpened,
    TextDelta,
)
from ...pipeline.wakeup import Wakeup
from ._script import (
    AwaitAnswer,
    Die,
    Emit,
    End,
    Exit,
    Flood,
    MockScript,
    Paced,
    Raw,
    Repeat,
    Sleep,
    Stderr,
    Step,
)

__all__ = ["MockDriver", "mock_details"]

VERSION = "mock-1"


def mock_details(script: MockScript) -> AgentDetails:
    features = {Capability.CONTEXT_USAGE, Capability.PLAN}
    if script.permissions:
        features |= {Capability.PERMISSIONS, Capability.QUESTIONS}
    if script.steer:
        features.add(Capability.STEER)
    if script.compact:
        features.add(Capability.COMPACT)
    if script.resume:
        features.add(Capability.RESUME)
    if script.rollback:
        features.add(Capability.ROLLBACK)
    return AgentDetails(
        version=VERSION,
        capabilities=Capabilities(features=frozenset(features)),
        config_options=script.options,
    )


class _Died(Exception):
    pass


class ChildIO(Protocol):
    """What the player can do to its own pipes when it runs as a child process."""

    async def raw(self, data: bytes) -> None: ...

    async def flood(self, size: int) -> None: ...

    async def stderr(self, text: str) -> None: ...

    async def exit(self, code: int) -> None: ...


class _Interrupted(Exception):
    pass


class MockDriver:
    def __init__(
        self, script: MockScript, spec: driver.LaunchSpec, io: ChildIO | None = None
    ) -> None:
        self._script = script
        self._io = io
        self._spec = spec
        self._inbox: Channel[driver.DriverCommand] = Channel(
            64, name=f"{spec.session_id}/mock-inbox"
        )
        self._later: deque[driver.DriverCommand] = deque()  # prompts that arrived mid-turn
        self._interrupt = asyncio.Event()
        self._answered = asyncio.Event()
        self._awaiting: str | None = None  # request id the script waits on
        self._turn_index = 0
        self._stopped = asyncio.Event()
        # A pause wakes on a side command, or a kick: interrupt, answer, stop.
        self._wakeup = Wakeup(self._inbox)

    async def start(self, tasks: asyncio.TaskGroup) -> driver.Handshake:
        token = None
        if self._script.resume:
            token = self._spec.resume or f"mock-{self._spec.session_id}"
        # Values chosen at open win over the script's; the Runtime refuses
        # (from `mock_details`) any the script does not offer.
        options = {
            option.id: option.current
            for option in self._script.options
            if option.current is not None
        }
        options.update(self._spec.configure)
        return driver.Handshake(
            details=mock_details(self._script),
            resume_token=token,
            options=tuple(options.items()),
            reliable_turn_end=self._script.deterministic,
        )

    async def send(self, command: driver.DriverCommand) -> None:
        match command:
            case driver.Interrupt():
                self._interrupt.set()
                self._wakeup.kick()
            case driver.Respond(request_id=request_id) | driver.Withdraw(request_id=request_id):
                if request_id == self._awaiting:
                    self._answered.set()
                    self._wakeup.kick()
            case _:
                await self._inbox.send(command)

    async def stop(self, grace: float) -> None:
        self._stopped.set()
        self._inbox.close()
        self._wakeup.kick()

    async def run(self, events_out: driver.EventSink) -> None:
        try:
            if self._script.on_open:
                await self._unprompted(self._script.on_open, events_out)
            while not self._stopped.is_set():
                command = self._later.popleft() if self._later else await self._next_command()
                if command is None:
                    return
                await self._idle_command(command, events_out)
        except _Died:
            await events_out.send(driver.AgentExited(status="9", stderr="mock died"))

    async def _next_command(self) -> driver.DriverCommand | None:
        """The next command while idle; None once stopped."""
        while not self._stopped.is_set():
            try:
                command = self._inbox.try_receive()
            except EndOfChannel:
                return None
            if command is not None:
                return command
            await self._inbox.wait_readable()
        return None

    async def _idle_command(
        self, command: driver.DriverCommand, events_out: driver.EventSink
    ) -> None:
        match command:
            case driver.StartTurn(text=text):
                await self._play_turn(text, events_out)
            case driver.Compact():
                await events_out.send(driver.TurnBegan())
                await events_out.send(driver.Emitted(kind=ContextCompacted()))
                await events_out.send(driver.TurnFinished(stop=Completed()))
            case _:
                await self._side_command(command, events_out)

    async def _side_command(
        self, command: driver.DriverCommand, events_out: driver.EventSink
    ) -> None:
        """Commands answered the same way mid-turn or idle."""
        match command:
            case driver.SteerTurn(prompt_id=prompt_id):
                if self._script.steer_rejects:
                    verdict = driver.SteerVerdict(
                        prompt_id=prompt_id, accepted=False, reason="busy"
                    )
                else:
                    verdict = driver.SteerVerdict(prompt_id=prompt_id, accepted=True)
                await events_out.send(verdict)
            case driver.Configure(option=option, value=value):
                if any(o.id == option for o in self._script.options):
                    await events_out.send(driver.ConfigApplied(option=option, value=value))
                else:
                    await events_out.send(
                        driver.ConfigRefused(option=option, reason="unknown option")
                    )
            case driver.Rollback():
                refused = self._script.rollback == "refuse"
                await events_out.send(
                    driver.RollbackVerdict(
                        accepted=not refused,
                        reason="the mock refuses rollbacks" if refused else None,
                    )
                )
            case driver.StartTurn() | driver.Compact():
                self._later.append(command)  # the engine queues; this is defensive

    async def _unprompted(self, steps: tuple[Step, ...], events_out: driver.EventSink) -> None:
        """Content the agent sends on its own: the engine opens an agent turn for it."""
        self._interrupt.clear()
        try:
            await self._play(steps, events_out)
        except _Interrupted:
            if not self._script.ignore_cancel:
                await events_out.send(driver.TurnFinished(stop=Cancelled()))

    async def _play_turn(self, text: str, events_out: driver.EventSink) -> None:
        index = self._turn_index
        self._turn_index += 1
        self._interrupt.clear()
        await events_out.send(driver.TurnBegan())
        steps: tuple[Step, ...]
        if index < len(self._script.turns):
            steps = self._script.turns[index]
        else:
            message_id = f"m{index + 1}"
            steps = (
                Emit(TextDelta(message_id=message_id, text=f"You said: {text}")),
                Emit(MessageEnded(message_id)),
            )
        try:
            ended = await self._play(steps, events_out)
        except _Interrupted:
            if not self._script.ignore_cancel:
                await events_out.send(driver.TurnFinished(stop=Cancelled()))
            return
        if not ended and self._script.deterministic:
            await events_out.send(driver.TurnFinished(stop=Completed()))

    async def _play(self, steps: tuple[Step, ...], events_out: driver.EventSink) -> bool:
        """Play steps; True once an End step ended the turn."""
        for step in steps:
            await self._between_steps(events_out)
            match step:
                case Emit(kind=RequestOpened(request=request)):
                    self._awaiting = request.id
                    self._answered.clear()
                    await events_out.send(driver.RequestAsked(request=request))
                case Emit(kind=kind, extensions=extensions, tokens=tokens, model=model):
                    await events_out.send(
                        driver.Emitted(kind=kind, tokens=tokens, model=model, extensions=extensions)
                    )
                case AwaitAnswer():
                    if self._awaiting is not None:
                        await self._pause(None, self._answered, events_out)
                        self._awaiting = None
                case End(stop=stop):
                    if self._script.deterministic:
                        await events_out.send(driver.TurnFinished(stop=stop))
                        return True
                case Die():
                    if self._io is not None:
                        await self._io.stderr("mock died")
                        await self._io.exit(9)
                    raise _Died
                case Raw() | Flood() | Stderr() | Exit():
                    await self._misbehave(step)
                case Paced(per_second=rate, count=count):
                    await self._paced(rate, count, events_out)
                case Sleep(seconds=seconds):
                    await self._pause(seconds, None, events_out)
                case Repeat(times=times, steps=body):
                    for _ in range(times):
                        if await self._play(body, events_out):
                            return True
        return False

    async def _paced(self, rate: float, count: int, events_out: driver.EventSink) -> None:
        """Timestamped deltas at a steady rate, for latency measurements."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        for n in range(count):
            if rate > 0:
                delay = start + n / rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            await self._between_steps(events_out)
            stamp = str(time.monotonic_ns())
            await events_out.send(driver.Emitted(kind=TextDelta(message_id="paced", text=stamp)))

    async def _misbehave(self, step: Raw | Flood | Stderr | Exit) -> None:
        io = self._io
        if io is None:
            raise RuntimeError("process-only steps need the mock's process mode")
        match step:
            case Raw(data=data):
                await io.raw(data)
            case Flood(size=size):
                await io.flood(size)
            case Stderr(text=text):
                await io.stderr(text)
            case Exit(code=code):
                await io.exit(code)

    async def _between_steps(self, events_out: driver.EventSink) -> None:
        if self._interrupt.is_set():
            raise _Interrupted
        while len(self._inbox):
            command = self._inbox.try_receive()
            if command is not None:
                await self._side_command(command, events_out)

    async def _pause(
        self, seconds: float | None, until: asyncio.Event | None, events_out: driver.EventSink
    ) -> None:
        """Wait for the time, the event or an interrupt; serve side commands meanwhile."""
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while not self._interrupt.is_set() and not (until is not None and until.is_set()):
            if self._stopped.is_set():
                raise _Interrupted  # the session is closing; stop playing
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return
            await self._wakeup.wait(at_most=remaining)  # then look again, above
            await self._between_steps(events_out)
        if self._interrupt.is_set():
            raise _Interrupted
