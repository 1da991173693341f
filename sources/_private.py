"""Secrets an agent must read at launch, kept off its command line.

A process's argv is public on the machine: `ps` and `/proc/<pid>/cmdline`
show it to every user. Configuration that may hold secrets (an MCP
server's env values, its HTTP headers) therefore goes in a file only
corral's user can read (0600), in a directory only that user can enter
(0700), and the agent is given the file's path.

`PrivateFile(name)` picks a fresh path under the temp directory and does
no I/O; `write` creates the directory (refusing one that already exists,
so nobody can have prepared it) and the file; `remove` deletes both and
may be called any number of times. The owner (a driver) writes it before
it starts the agent and removes it when the session stops, on every path.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile

__all__ = ["PrivateFile"]


class PrivateFile:
    def __init__(self, name: str, *, parent: str | None = None) -> None:
        base = parent if parent is not None else tempfile.gettempdir()
        self.dir = os.path.join(base, f"corral-{secrets.token_hex(8)}")
        self.path = os.path.join(self.dir, name)

    def write(self, content: str) -> None:
        os.mkdir(self.dir, 0o700)  # FileExistsError if anyone made it first
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(content)

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):  # never written, or removed already
            os.unlink(self.path)
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(self.dir)
