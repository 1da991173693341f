"""One line of progress on stderr, for long work: `corral bench`, `corral import`.

    bar = Progress(len(files), enabled=sys.stderr.isatty())
    for path in files:
        ...
        bar.step(path.name)          # [#####.....] 3/10 ~0:12 left  notes.jsonl
    bar.finish()                     # the line ends: what follows starts clean

The line is redrawn in place (a carriage return, no cursor codes), so it
needs a terminal: callers pass `enabled=stream.isatty()` (or a flag that
forces it), and a disabled bar writes nothing at all, so a pipe, a log or
a test sees only the command's own output. Progress goes to stderr, never
stdout, where the command's results are.

Time left is the mean time per step so far times the steps left: good for
steps of similar size (files), rough for phases that differ (the bench says
"~"). It is shown once one step is done. Our own twenty lines rather than
a library: one bar, one line, no colours, no threads.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "left"]

_WIDTH = 30


def left(seconds: float) -> str:
    """`~1:05 left`, `~1:02:03 left`."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    shown = f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"
    return f"~{shown} left"


_NOTE = 40  # characters of the note shown


def clipped(note: str) -> str:
    """The note in its width: its start (the step) and its end (a file's name), cut between."""
    if len(note) <= _NOTE:
        return note
    head = (_NOTE - 1) // 2
    return f"{note[:head]}…{note[len(note) - (_NOTE - 1 - head) :]}"


class Progress:
    """A one-line bar: done of total, time left, and a note (the step just done)."""

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr  # the one of the moment
        self._enabled = enabled and total > 1
        self._clock = clock
        self._started = clock()
        self._drawn = False

    def show(self, note: str) -> None:
        """Redraw the line with a note about the step under way (counts nothing)."""
        if not self._enabled:
            return
        filled = _WIDTH * self.done // max(1, self.total)
        bar = "#" * filled + "." * (_WIDTH - filled)
        eta = ""
        if 0 < self.done < self.total:
            per_step = (self._clock() - self._started) / self.done
            eta = " " + left(per_step * (self.total - self.done))
        self._stream.write(f"\r[{bar}] {self.done}/{self.total}{eta} {clipped(note):<{_NOTE}}")
        self._stream.flush()
        self._drawn = True

    def step(self, note: str) -> None:
        """One more step done."""
        self.done += 1
        self.show(note)

    def finish(self) -> None:
        if self._enabled and self._drawn:
            self._stream.write("\n")
            self._stream.flush()
