"""The `fs` client capability: regular text files beneath the session directory only.

An ACP agent may ask the client (corral) to read or write a text file
(`fs/read_text_file`, `fs/write_text_file`). Neither is served on the
agent's word alone: the driver asks the session's permission policy first
(a Read request with the path, an Edit request with the diff) and touches
the file only once that was allowed.

Two moments, two calls per access:
- judgement (`judge_read`, `judge_write`): the path is read beneath the
  session directory (`sources/_beneath.py`: no link followed, `..` read
  lexically, absolute paths only inside) and the file opened and fstat'ed
  once, so the policy sees the absolute path corral will open, a FIFO or
  a device is refused before anyone is asked, and the file's identity is
  kept;
- use (`read_text`, `write_text`): the path is opened again the same way,
  and the file actually opened must be the one judged (same device and
  inode; a write judged "new" must still be new). A link swapped in, a
  folder replaced by a link, a file replaced: the agent gets an error and
  nothing outside is touched.

Every refusal is an `FsRefused` carrying the JSON-RPC error code the agent
reads. Blocking file calls: the driver runs them in a worker thread.
"""

from __future__ import annotations

import os

import attrs

from .._beneath import (
    BeneathError,
    FileId,
    Missing,
    Outside,
    beneath,
    open_beneath,
    open_parent,
    read_beneath,
    write_beneath,
)
from ._frames import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND

__all__ = [
    "MAX_READ_BYTES",
    "FsRefused",
    "Judged",
    "confine",
    "cwd_beneath",
    "judge_read",
    "judge_write",
    "read_text",
    "write_text",
]

MAX_READ_BYTES = 16 * 1024 * 1024


class FsRefused(Exception):
    """A file request corral will not serve; `code` is the JSON-RPC error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@attrs.frozen(kw_only=True)
class Judged:
    """A file as the policy judged it: the path corral opens, and which file it was."""

    path: str  # absolute, beneath the session directory, `..` resolved
    file: FileId | None  # None: it does not exist yet (a write creates it)
    text: str | None = None  # a write's current text, for the diff


def _refused(error: BeneathError) -> FsRefused:
    if isinstance(error, Missing):
        return FsRefused(RESOURCE_NOT_FOUND, str(error))
    if type(error) is BeneathError:  # the system said no (permissions, I/O)
        return FsRefused(INTERNAL_ERROR, str(error))
    return FsRefused(INVALID_PARAMS, str(error))  # the agent's path: bad, outside, a link...


def confine(root: str, path: object) -> str:
    """The absolute path beneath `root` that `path` names (read lexically, nothing opened)."""
    try:
        parts = beneath(root, path)
    except Outside:
        raise FsRefused(INVALID_PARAMS, f"{path} is outside the session directory {root}") from None
    except BeneathError as error:
        raise _refused(error) from None
    return os.path.join(os.path.normpath(root), *parts)


def _lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    pieces = text.split("\n")
    kept = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    start = max((line or 1) - 1, 0)
    end = None if limit is None else start + max(limit, 0)
    return "".join(kept[start:end])


def _read(root: str, path: object, expect: FileId | None) -> tuple[str, FileId]:
    try:
        raw, file = read_beneath(root, path, limit=MAX_READ_BYTES, expect=expect)
    except BeneathError as error:
        raise _refused(error) from None
    except OSError as error:
        raise FsRefused(INTERNAL_ERROR, f"cannot read {path}: {error.strerror}") from None
    return raw.decode("utf-8", errors="replace"), file


def judge_read(root: str, path: object) -> Judged:
    """Before asking: the path to judge, and the regular file it is now."""
    shown = confine(root, path)
    try:
        fd, status = open_beneath(root, shown)
    except BeneathError as error:
        raise _refused(error) from None
    os.close(fd)
    if status.st_size > MAX_READ_BYTES:
        raise FsRefused(INVALID_PARAMS, f"{shown} is {status.st_size} bytes, over corral's limit")
    return Judged(path=shown, file=FileId.of(status))


def cwd_beneath(root: str, path: object) -> str:
    """A working directory beneath `root`, reached without links: its absolute path."""
    shown = confine(root, path)
    try:
        parts = beneath(root, shown)
        os.close(open_parent(root, (*parts, "-")))
    except BeneathError as error:
        raise _refused(error) from None
    return shown


def read_text(root: str, judged: Judged, line: int | None = None, limit: int | None = None) -> str:
    """After an allow: the judged file's text (from 1-based `line`, at most `limit` lines)."""
    text, _ = _read(root, judged.path, judged.file)
    return _lines(text, line, limit)


def judge_write(root: str, path: object) -> Judged:
    """Before asking: the path to judge, the file there now (if any) and its text."""
    shown = confine(root, path)
    try:
        text, file = _read(root, shown, None)
    except FsRefused as refused:
        if refused.code != RESOURCE_NOT_FOUND:
            raise
        return Judged(path=shown, file=None)
    return Judged(path=shown, file=file, text=text)


def write_text(root: str, judged: Judged, content: str) -> None:
    """After an allow: replace the judged file's content, or create it if it was new."""
    try:
        encoded = content.encode("utf-8")
    except UnicodeEncodeError:
        raise FsRefused(INVALID_PARAMS, "the content is not valid UTF-8") from None
    try:
        write_beneath(
            root, judged.path, encoded, expect=judged.file, must_be_new=judged.file is None
        )
    except BeneathError as error:
        raise _refused(error) from None
    except OSError as error:
        raise FsRefused(INTERNAL_ERROR, f"cannot write {judged.path}: {error.strerror}") from None
