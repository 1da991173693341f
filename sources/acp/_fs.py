"""The `fs` client capability: text files inside the session directory only.

An ACP agent may ask the client (corral) to read or write a text file
(`fs/read_text_file`, `fs/write_text_file`). Every path is resolved with
symlinks followed and must stay inside the session directory; anything
else is refused with a JSON-RPC error the agent reads. Writes are never
done here on the agent's word alone: the driver first asks the session's
permission policy (an Edit request with the diff) and calls `write_text`
only once that was allowed, re-checking the path at that moment.

Blocking file calls: the driver runs them in a worker thread.
"""

from __future__ import annotations

import os

from ._frames import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND

__all__ = ["MAX_READ_BYTES", "FsRefused", "confine", "old_text", "read_text", "write_text"]

MAX_READ_BYTES = 16 * 1024 * 1024


class FsRefused(Exception):
    """A file request corral will not serve; `code` is the JSON-RPC error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def confine(root: str, path: str) -> str:
    """The real path of `path`, which must lie inside `root`."""
    if not isinstance(path, str) or not path:
        raise FsRefused(INVALID_PARAMS, "path must be a non-empty string")
    candidate = path if os.path.isabs(path) else os.path.join(root, path)
    real_root = os.path.realpath(root)
    real = os.path.realpath(candidate)
    if os.path.commonpath([real_root, real]) != real_root:
        raise FsRefused(INVALID_PARAMS, f"{path} is outside the session directory {root}")
    return real


def _lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    pieces = text.split("\n")
    kept = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    start = max((line or 1) - 1, 0)
    end = None if limit is None else start + max(limit, 0)
    return "".join(kept[start:end])


def read_text(root: str, path: str, line: int | None = None, limit: int | None = None) -> str:
    """A file's text (from 1-based `line`, at most `limit` lines)."""
    real = confine(root, path)
    try:
        size = os.path.getsize(real)
        if size > MAX_READ_BYTES:
            raise FsRefused(INTERNAL_ERROR, f"{path} is {size} bytes, over corral's read limit")
        with open(real, encoding="utf-8", errors="replace", newline="") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise FsRefused(RESOURCE_NOT_FOUND, f"{path} does not exist") from None
    except IsADirectoryError:
        raise FsRefused(INVALID_PARAMS, f"{path} is a directory") from None
    except OSError as error:
        raise FsRefused(INTERNAL_ERROR, f"cannot read {path}: {error.strerror}") from None
    return _lines(text, line, limit)


def old_text(root: str, path: str) -> tuple[str, str | None]:
    """(the confined real path, the file's current text or None if it is new)."""
    real = confine(root, path)
    if os.path.isdir(real):
        raise FsRefused(INVALID_PARAMS, f"{path} is a directory")
    try:
        with open(real, encoding="utf-8", errors="replace", newline="") as handle:
            return real, handle.read(MAX_READ_BYTES)
    except FileNotFoundError:
        return real, None
    except OSError as error:
        raise FsRefused(INTERNAL_ERROR, f"cannot read {path}: {error.strerror}") from None


def write_text(root: str, path: str, content: str) -> None:
    """Write the whole file (creating folders inside `root`), after the policy allowed it."""
    real = confine(root, path)
    try:
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
    except OSError as error:
        raise FsRefused(INTERNAL_ERROR, f"cannot write {path}: {error.strerror}") from None
