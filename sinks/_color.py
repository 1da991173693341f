"""Whether the CLI colours what it writes: the one decision, for every command.

`corral transcripts show` and `corral demo` (and anything else that writes
ANSI colour) ask `use_color(stream, flag)`. The rule, in order:
`NO_COLOR` set to anything non-empty turns colour off, whatever else is
asked (https://no-color.org); an explicit `--no-color`/`--color` flag
decides next; otherwise colour is on only when the stream is a terminal
(a pipe or a file never receives escape codes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

__all__ = ["use_color"]


def use_color(
    stream: TextIO, flag: bool | None = None, *, environ: Mapping[str, str] | None = None
) -> bool:
    """Colour on `stream`? `flag`: the command line's `--color` (True) / `--no-color` (False)."""
    if (os.environ if environ is None else environ).get("NO_COLOR"):
        return False
    if flag is not None:
        return flag
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())
