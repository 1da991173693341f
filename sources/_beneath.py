"""Opening files beneath a directory: no link followed, no check-then-use race.

corral serves files to agents (ACP's `fs/read_text_file`,
`fs/write_text_file`) only inside the session directory. Checking a path
with `realpath` and then opening it by name is a race: between the check
and the open the agent can swap a component for a symlink that leads out.
So nothing here opens a path by name from `/`. A path is first read
lexically into the components beneath the root (`beneath`), then opened
one component at a time from a file descriptor of the root:

    root fd ─openat(part, O_DIRECTORY|O_NOFOLLOW)─► dir fd ─ ... ─► parent fd
    parent fd ─openat(name, O_NOFOLLOW|O_NONBLOCK)─► file fd ─fstat─► regular?

- Every component is opened with `O_NOFOLLOW`: a symlink anywhere in the
  path is refused (`LinkRefused`), whether it points out or in. A directory
  swapped for a link after we opened it does not matter: we hold its fd.
- `..` is resolved lexically before any open. Because no link is ever
  followed, the lexical reading is the real one; a path whose `..` climbs
  above the root is outside.
- The last component is opened with `O_NONBLOCK` (a FIFO never blocks the
  open) and judged by `fstat` of the descriptor actually opened: only a
  regular file is served (`NotRegular` for FIFOs, devices, sockets,
  directories).
- A write opens an existing file without `O_TRUNC` and truncates through
  the descriptor only after `fstat` said it is a regular file with one
  link; a new file is made with `O_CREAT|O_EXCL|O_NOFOLLOW` beneath the
  parent's fd (missing folders with `mkdirat`), so a dangling link is
  never written through.
- The caller may pass the identity (`st_dev`, `st_ino`) of the file it
  judged: a different file at use time is `Changed`.

Bad names (empty, NUL bytes, lone surrogates, over `MAX_PATH_BYTES` or a
component over `MAX_NAME_BYTES`) are `BadPath` before any system call.
Every failure is a `BeneathError` subclass; descriptors are always closed.
Blocking calls: run them in a worker thread from async code.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

import attrs

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "BadPath",
    "BeneathError",
    "Changed",
    "FileId",
    "LinkRefused",
    "Missing",
    "NotRegular",
    "Outside",
    "beneath",
    "open_beneath",
    "open_parent",
    "read_beneath",
    "write_beneath",
]

MAX_PATH_BYTES = 4096  # Linux PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class BeneathError(Exception):
    """A path corral will not open; the message says why, for the agent."""


class BadPath(BeneathError):
    """Not a usable path at all (empty, NUL byte, not UTF-8, too long)."""


class Outside(BeneathError):
    """The path leads outside the directory."""


class LinkRefused(BeneathError):
    """A component is a symbolic link (or not a directory where one is needed)."""


class NotRegular(BeneathError):
    """The file is not a regular file (a FIFO, a device, a directory...)."""


class Missing(BeneathError):
    """Nothing by that name."""


class Changed(BeneathError):
    """The file opened is not the file that was judged."""


@attrs.frozen
class FileId:
    """Which file: the identity `fstat` gives, compared between judgement and use."""

    device: int
    inode: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileId:
        return cls(status.st_dev, status.st_ino)


def _checked(path: object) -> str:
    if not isinstance(path, str) or not path:
        raise BadPath("the path must be a non-empty string")
    if "\x00" in path:
        raise BadPath("the path contains a NUL byte")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadPath("the path is not valid UTF-8 (a lone surrogate)") from None
    if size > MAX_PATH_BYTES:
        raise BadPath(f"the path is {size} bytes long, over {MAX_PATH_BYTES}")
    return path


def beneath(root: str, path: object) -> tuple[str, ...]:
    """The components of `path` beneath `root`, read lexically; () is the root itself.

    `path` is absolute (it must then start with `root`, as given or with
    its links resolved) or relative to `root`.
    """
    given = _checked(path)
    if os.path.isabs(given):
        lexical = os.path.normpath(given)
        for base in dict.fromkeys((os.path.normpath(root), os.path.realpath(root))):
            if lexical == base:
                return ()
            if lexical.startswith(base.rstrip("/") + "/"):
                given = lexical[len(base.rstrip("/")) + 1 :]
                break
        else:
            raise Outside(f"{given} is outside the directory {root}")
    relative = os.path.normpath(given)
    if relative == ".":
        return ()
    parts = tuple(relative.split("/"))
    if parts[0] == "..":
        raise Outside(f"{given} climbs out of the directory {root}")
    for part in parts:
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise BadPath(f"a component of the path is over {MAX_NAME_BYTES} bytes")
    return parts


def _os_error(error: OSError, what: str) -> BeneathError:
    if error.errno == errno.ENOENT:
        return Missing(f"{what} does not exist")
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return LinkRefused(f"{what} is a symbolic link or goes through one")
    if error.errno == errno.ENXIO:
        return NotRegular(f"{what} is not a regular file")
    if error.errno == errno.ENAMETOOLONG:
        return BadPath(f"{what} is too long")
    return BeneathError(f"cannot open {what}: {error.strerror}")


def _not_a_directory(folder: int, name: str, where: str) -> BeneathError:
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link:
        return LinkRefused(f"{where} is a symbolic link")
    return NotRegular(f"{where} is not a directory")


def open_parent(root: str, parts: tuple[str, ...], *, make: bool = False) -> int:
    """A descriptor of the folder that holds `parts[-1]`, reached without following links.

    `make`: missing folders are created (mkdirat) on the way. The caller closes it.
    """
    try:
        current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise _os_error(error, f"the directory {root}") from None
    try:
        for index, part in enumerate(parts[:-1]):
            where = "/".join(parts[: index + 1])
            try:
                following = os.open(part, _DIR_FLAGS, dir_fd=current)
            except FileNotFoundError:
                if not make:
                    raise Missing(f"{where} does not exist") from None
                try:
                    os.mkdir(part, 0o777, dir_fd=current)
                    following = os.open(part, _DIR_FLAGS, dir_fd=current)
                except OSError as error:
                    raise _os_error(error, where) from None
            except NotADirectoryError:
                raise _not_a_directory(current, part, where) from None
            except OSError as error:
                raise _os_error(error, where) from None
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


OpenHook = Callable[[int, str], None]


def open_beneath(
    root: str,
    path: object,
    *,
    write: bool = False,
    create: bool = False,
    exclusive: bool = False,
    expect: FileId | None = None,
    before_open: OpenHook | None = None,
) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file `path` beneath `root`, and its fstat.

    `write`: opened for writing, never truncated here. `create`: a missing
    file is made (exclusively, never through a link) and folders too;
    `exclusive`: only a new file will do (`Changed` if one exists).
    `expect`: the identity judged earlier; another file is `Changed`.
    `before_open(parent_fd, name)` runs between reaching the folder and
    opening the file (tests use it to race us deterministically).
    """
    parts = beneath(root, path)
    if not parts:
        raise NotRegular(f"{path} is the directory itself")
    parent = open_parent(root, parts, make=create or exclusive)
    name = parts[-1]
    try:
        if before_open is not None:
            before_open(parent, name)
        if exclusive:
            fd = _create(parent, name, os.O_WRONLY if write else os.O_RDONLY)
        else:
            fd = _open_last(parent, name, write=write, create=create)
    finally:
        os.close(parent)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if expect is not None and FileId.of(status) != expect:
            raise Changed(f"{path} changed after corral judged it")
        if write and status.st_nlink > 1:
            raise NotRegular(f"{path} has other hard links; corral does not write through them")
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def _open_last(parent: int, name: str, *, write: bool, create: bool) -> int:
    mode = os.O_WRONLY if write else os.O_RDONLY
    try:
        return os.open(name, mode | _FILE_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise Missing(f"{name} does not exist") from None
    except OSError as error:
        raise _os_error(error, name) from None
    return _create(parent, name, mode)


def _create(parent: int, name: str, mode: int) -> int:
    try:
        return os.open(name, mode | _FILE_FLAGS | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=parent)
    except FileExistsError:
        raise Changed(f"{name} appeared after corral judged it absent") from None
    except OSError as error:
        raise _os_error(error, name) from None


def read_beneath(
    root: str, path: object, *, limit: int, expect: FileId | None = None
) -> tuple[bytes, FileId]:
    """The bytes of a regular file beneath `root` (BeneathError over `limit` bytes)."""
    fd, status = open_beneath(root, path, expect=expect)
    try:
        if status.st_size > limit:
            raise BeneathError(f"{path} is {status.st_size} bytes, over the limit of {limit}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while we read
                raise BeneathError(f"{path} is over the limit of {limit} bytes")
    finally:
        os.close(fd)
    return b"".join(chunks), FileId.of(status)


def write_beneath(
    root: str,
    path: object,
    content: bytes,
    *,
    expect: FileId | None = None,
    must_be_new: bool = False,
    before_open: OpenHook | None = None,
) -> None:
    """Replace the content of a regular file beneath `root`, or create it.

    `expect`: the existing file judged earlier; `must_be_new`: it was judged
    absent, so an existing one now is `Changed`. Neither: whichever is there.
    """
    try:
        fd, _ = open_beneath(
            root,
            path,
            write=True,
            create=expect is None,
            exclusive=must_be_new,
            expect=expect,
            before_open=before_open,
        )
    except Missing:
        if expect is not None:
            raise Changed(f"{path} disappeared after corral judged it") from None
        raise
    try:
        os.ftruncate(fd, 0)
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
