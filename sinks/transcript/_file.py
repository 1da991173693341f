"""One transcript file on disk: whole lines or nothing, locked while written.

All of it is blocking I/O, run in a worker thread (never on the event loop).

Invariants:
- the file only ever holds complete lines: a batch is written with as many
  `write` calls as it takes, and if one fails (disk full, I/O error) the file
  is truncated back to the last complete line before the error is raised;
  should even that fail, the torn tail is cut when the file is reopened;
- a file appears under its final name already holding its header and an
  exclusive `flock`: it is created under a temporary name, locked, given its
  header and linked into place (a link never replaces an existing file). A
  reader that can take the lock knows nobody is writing the file;
- fsync follows the policy: `always` after every batch, `turn` after a batch
  that ends a turn or the session, `never` leaves it to the OS; a new file's
  directory entry is made durable unless the policy is `never`.

`write` and `sync` are injectable so tests can fail at the OS boundary
(ENOSPC after part of a line) without a full disk, and count fsyncs.
`IoStats` adds up the bytes written and the time spent in each fsync, for
the metrics (the sink takes them after each batch, on the event loop).
"""

from __future__ import annotations

import contextlib
import enum
import errno
import gzip
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

if sys.platform != "win32":  # POSIX-only; `corral --help` must import anywhere
    import fcntl

__all__ = [
    "FsyncPolicy",
    "IoStats",
    "LineFile",
    "OsSync",
    "OsWrite",
    "TranscriptWriteError",
    "compress_part",
    "fsync_dir",
]

OsWrite = Callable[[int, bytes], int]
OsSync = Callable[[int], None]


class FsyncPolicy(enum.StrEnum):
    ALWAYS = "always"
    TURN = "turn"
    NEVER = "never"


class TranscriptWriteError(Exception):
    """The transcript could not be written; what is on disk stays valid.

    `kept_lines` says how many lines of the failed batch did reach the file.
    """

    def __init__(self, path: Path, error: OSError, *, doing: str, kept_lines: int = 0) -> None:
        self.path = path
        self.errno = error.errno
        self.kept_lines = kept_lines
        reason = error.strerror or str(error)
        if error.errno == errno.ENOSPC:
            reason += " (the disk is full)"
        elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            reason += " (the transcript directory is not writable)"
        self.reason = reason
        super().__init__(f"cannot {doing} {path}: {reason}")


@attrs.define
class IoStats:
    """Bytes written and fsync durations since the last `take` (one writer's thread)."""

    written: int = 0
    fsyncs: list[float] = attrs.field(factory=list)

    def take(self) -> tuple[int, list[float]]:
        taken = self.written, self.fsyncs
        self.written, self.fsyncs = 0, []
        return taken


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LineFile:
    """An append-only file of complete lines, exclusively locked while open."""

    def __init__(
        self,
        path: Path,
        *,
        fsync: FsyncPolicy,
        write: OsWrite = os.write,
        sync: OsSync = os.fsync,
        max_write: int | None = None,
        stats: IoStats | None = None,
    ) -> None:
        self.path = path
        self.fsync = fsync
        self.size = 0
        self.stats = stats if stats is not None else IoStats()
        self._write = write
        self._sync = sync
        self._max_write = max_write  # bytes per write call (tests tear lines with it)
        self._fd: int | None = None

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def create(self, first_line: bytes) -> None:
        """Create the file with its first line; FileExistsError if the name is taken."""
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            temporary = folder / f".{self.path.name}.{os.getpid()}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise TranscriptWriteError(self.path, error, doing="create") from None
        self._fd = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.append([first_line], durable=True)
            os.link(temporary, self.path)
            if self.fsync is not FsyncPolicy.NEVER:
                fsync_dir(folder)
        except FileExistsError:
            self.close(durable=False)
            raise
        except TranscriptWriteError:
            self.close(durable=False)
            raise
        except OSError as error:
            self.close(durable=False)
            raise TranscriptWriteError(self.path, error, doing="create") from None
        finally:
            _unlink_quietly(temporary)

    def append(self, lines: Sequence[bytes], *, durable: bool) -> None:
        """Write whole lines; on failure cut back to the last whole line and raise."""
        assert self._fd is not None, "append on a closed file"
        data = b"".join(lines)
        done = 0
        try:
            while done < len(data):
                end = len(data) if self._max_write is None else done + self._max_write
                written = self._write(self._fd, data[done:end])
                if written <= 0:
                    raise OSError(errno.EIO, "write returned no progress")
                done += written
                self.stats.written += written
        except OSError as error:
            kept = data.rfind(b"\n", 0, done) + 1
            self._cut_to(self.size + kept)
            raise TranscriptWriteError(
                self.path, error, doing="write to", kept_lines=data.count(b"\n", 0, kept)
            ) from None
        self.size += len(data)
        if self.fsync is FsyncPolicy.ALWAYS or (self.fsync is FsyncPolicy.TURN and durable):
            self.sync()

    def _cut_to(self, size: int) -> None:
        assert self._fd is not None
        # Should even this fail, the torn tail stays; reopening the file cuts it (and counts it).
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, size)
            # The next write goes where the file now ends, not where the torn one
            # did: past the end, it would leave a hole of NUL bytes before it.
            os.lseek(self._fd, size, os.SEEK_SET)
        self.size = size

    def sync(self) -> None:
        assert self._fd is not None
        self._timed_sync(self._fd, doing="flush")

    def _timed_sync(self, fd: int, *, doing: str) -> None:
        started = time.perf_counter()
        try:
            self._sync(fd)
        except OSError as error:
            raise TranscriptWriteError(self.path, error, doing=doing) from None
        finally:
            self.stats.fsyncs.append(time.perf_counter() - started)

    def close(self, *, durable: bool) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if durable and self.fsync is not FsyncPolicy.NEVER:
                started = time.perf_counter()
                try:
                    self._sync(fd)  # an OSError here is the caller's to report
                finally:
                    self.stats.fsyncs.append(time.perf_counter() - started)
        finally:
            os.close(fd)  # also releases the lock


def compress_part(plain: Path, *, durable: bool) -> Path:
    """gzip a rotated part next to itself, then drop the plain copy.

    The .gz appears under its final name only once complete (written as
    .tmp, synced, renamed); until then the plain part is the one read.
    """
    final = plain.with_name(plain.name + ".gz")
    temporary = plain.with_name(plain.name + ".gz.tmp")
    with plain.open("rb") as source, open(temporary, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed:
            shutil.copyfileobj(source, packed, 1024 * 1024)
        raw.flush()
        if durable:
            os.fsync(raw.fileno())
    os.replace(temporary, final)
    if durable:
        fsync_dir(final.parent)
    plain.unlink()
    return final


def _unlink_quietly(path: Path) -> None:
    path.unlink(missing_ok=True)
