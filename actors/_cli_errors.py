"""The CLI's one error boundary: a user's mistake is one line, a bug a traceback.

`guarded(run)` wraps the whole of `corral`'s main. What a user can cause and
fix — a `UsageError` (a bad argument or config value), a `CorralError` (a
bad policy file, an agent that is not installed...), an `OSError` about one
of their paths (an unusable `CORRAL_HOME`, `-o` into a missing folder) — is
printed as one `corral: ...` line on stderr saying what is wrong and how to
fix it, with its exit status. Ctrl-C is 130, without a traceback. Anything
else is a bug in corral and propagates with its traceback, as it must.

An error raised inside a task group arrives wrapped in an ExceptionGroup;
when every error inside is a user's, the first is reported like the bare one.

Exit statuses (listed in `corral --help`): 0 ok, 1 a failure, 2 a usage
error, 130 interrupted.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

from ..pipeline.errors import CorralError

__all__ = [
    "EXIT_CODES_HELP",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "guarded",
    "one_line",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """exit status:
  0    ok
  1    a failure (a command that could not do its work, a bad file or path)
  2    usage (a bad command line or config value)
  130  interrupted (Ctrl-C)"""


class UsageError(Exception):
    """The command line (or the config file standing in for it) asks for something invalid."""


_HINTS = {
    errno.ENOENT: "check the path; a folder in it may be missing",
    errno.ENOTDIR: "a part of that path is a file, not a folder; pick another path",
    errno.EISDIR: "that is a folder; give a file name",
    errno.EACCES: "check its permissions, or pick a folder you can write to",
    errno.EPERM: "check its permissions, or pick a folder you can write to",
    errno.EROFS: "it is on a read-only file system; pick a writable folder",
    errno.EEXIST: "something is already there; remove it or pick another path",
    errno.ENOSPC: "the disk is full; free some space",
}


def _os_line(error: OSError) -> str:
    path = os.fsdecode(error.filename)
    what = error.strerror or type(error).__name__
    hint = _HINTS.get(error.errno or 0, "")
    home = os.environ.get("CORRAL_HOME")
    if home and path.startswith(os.path.abspath(os.path.expanduser(home))):
        hint = "CORRAL_HOME must be a writable folder; set it to one"
    return f"{path}: {what}" + (f" ({hint})" if hint else "")


def one_line(error: BaseException) -> str | None:
    """The one line a user's error is told in; None for a bug (keep its traceback)."""
    match error:
        case UsageError() | CorralError():
            text = str(error)
        case OSError() if error.filename is not None:
            text = _os_line(error)
        case BaseExceptionGroup():
            lines = [one_line(inner) for inner in error.exceptions]
            return lines[0] if lines and None not in lines else None
        case _:
            return None
    return " ".join(text.split())  # one line, whatever the message held


def _exit_status(error: BaseException) -> int:
    if isinstance(error, BaseExceptionGroup):
        return _exit_status(error.exceptions[0])
    return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILURE


def guarded(run: Callable[[], int]) -> int:
    """`run()`'s status; a user's error as one line on stderr and its status."""
    try:
        return run()
    except KeyboardInterrupt:
        print("corral: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`corral ... | head`): nothing left to say to it.
        _silence_stdout()
        return EXIT_FAILURE
    except (UsageError, CorralError, OSError, BaseExceptionGroup) as error:
        line = one_line(error)
        if line is None:
            raise
        print(f"corral: {line}", file=sys.stderr)
        return _exit_status(error)


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that
    # flush does not raise a second BrokenPipeError.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
