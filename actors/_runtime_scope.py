"""The Runtime's scope: the archive it owns, and how its task group's exit reads.

`owned_archive` decides the transcript archive a Runtime keeps (a new one
it owns and closes, one the caller shares, or none); `unwrapped` is the
exit of the Runtime's task group with the body's own exception left as it
was, so `async with Runtime()` never turns a caller's `CorralError` into an
`ExceptionGroup`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable

from ..sinks.metrics import Metrics
from ..sinks.transcript import Archive, TranscriptSettings

__all__ = ["owned_archive", "unwrapped"]


def owned_archive(
    transcripts: TranscriptSettings | Archive | bool, metrics: Metrics | None
) -> tuple[Archive | None, bool]:
    """The Runtime's archive and whether the Runtime owns (and closes) it."""
    if isinstance(transcripts, Archive):
        return transcripts, False
    if transcripts is False:
        return None, False
    settings = (
        transcripts
        if isinstance(transcripts, TranscriptSettings)
        else TranscriptSettings.from_environ(os.environ)
    )
    return Archive(settings, metrics=metrics), True


async def unwrapped(exiting: Awaitable[bool | None], error: BaseException | None) -> None:
    """The task group's exit, with the caller's own exception left as it was.

    The body of `async with Runtime()` runs inside the Runtime's task group,
    which would wrap what the body raised in an `ExceptionGroup`; the caller
    gets back exactly what it raised (a `CorralError`, its own exception),
    and a group of one (a failure of the Runtime's own) as that one error.
    """
    try:
        await exiting
    except BaseExceptionGroup as group:
        if error is not None and group.exceptions == (error,):
            return  # `__aexit__` returns: the body's exception propagates unchanged
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
