"""Process families: every process a session's agent (or a command) starts, found and ended.

A process group is not enough to end what an agent started: a child that
calls `setsid()` leaves the group, and one that double-forks leaves its
parent too. Three facts keep such a process findable:

- **Ancestry.** While its parent lives, `/proc/PID/task/*/children` leads
  from the family's root (the agent, or a terminal's shell) down to it.
- **Subreaper.** corral marks itself a child subreaper
  (`prctl(PR_SET_CHILD_SUBREAPER)`, `become_subreaper`, once per Runtime):
  an orphan re-parents to corral instead of to init, so it stays among
  corral's own children.
- **A mark in the environment.** Each family's root starts with
  `CORRAL_FAMILY=<token>` in its environment; children inherit it, so an
  orphan among corral's children that carries the token belongs to that
  family (and to no other).

A `Family` remembers every member it has seen (pid and start time, so a
reused pid is never mistaken for a member); `scan` walks the tree again;
`signal` sends one signal to the root's group and to every member found;
`reap` collects the exit status of members that became corral's children
(asyncio's watcher only waits for the processes asyncio started), so no
zombie is left behind.

Invariant: a signal goes only to a pid whose current start time equals
the one recorded when it was found as a descendant of the root, or to the
root's own process group. Nothing is ever killed by name.

Linux only (it reads /proc); elsewhere a Family knows only the group.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import secrets
import signal
import sys

__all__ = ["FAMILY_VARIABLE", "Family", "become_subreaper", "is_subreaper"]

FAMILY_VARIABLE = "CORRAL_FAMILY"
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_FREEZE_ROUNDS = 5
_MAX_MEMBERS = 4096  # a fork bomb must not make corral's memory grow without end


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux); whether it now does."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def is_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    flag = ctypes.c_int(0)
    if libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) != 0:
        return False
    return flag.value != 0


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()  # the name may hold spaces and parens
    try:
        return fields[0].decode("ascii", "replace"), int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _children(pid: int) -> set[int]:
    """The children of every thread of `pid` (empty when it is gone)."""
    found: set[int] = set()
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as children:
                found.update(int(child) for child in children.read().split())
        except OSError:
            continue  # the thread ended meanwhile
    return found


def _carries(pid: int, mark: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return mark in b"\0" + environ.read()
    except OSError:
        return False


class Family:
    """The root process `root` (a group leader) and everything that descends from it."""

    def __init__(self, root: int, token: str) -> None:
        if root <= 1 or root == os.getpid():  # killpg would reach init, or corral itself
            raise ValueError(f"{root} cannot be the root of a family")
        self.root = root
        self.token = token
        self._mark = f"\0{FAMILY_VARIABLE}={token}\0".encode()
        self._members: dict[int, int] = {}  # pid -> start time when found
        self._reapable: set[int] = set()  # members seen as corral's own children

    @staticmethod
    def new_token() -> str:
        return f"{os.getpid()}-{secrets.token_hex(8)}"

    @staticmethod
    def environment(token: str) -> dict[str, str]:
        """What a root's environment must carry for its orphans to be recognised."""
        return {FAMILY_VARIABLE: token}

    def _same(self, pid: int) -> tuple[str, int, int] | None:
        stat = _stat(pid)
        if stat is None or self._members.get(pid, stat[2]) != stat[2]:
            return None  # gone, or a new process that reuses the pid
        return stat

    def _remember(self, pid: int, stat: tuple[str, int, int]) -> None:
        if pid in self._members or len(self._members) < _MAX_MEMBERS:
            self._members[pid] = stat[2]
            if stat[1] == os.getpid():
                self._reapable.add(pid)

    def scan(self, *, orphans: bool = True) -> set[int]:
        """Every live member now (the root excluded); remembers each one found."""
        if not sys.platform.startswith("linux"):
            return set()
        frontier = {self.root, *self._members}
        if orphans:
            me = os.getpid()
            frontier |= {pid for pid in _children(me) if _carries(pid, self._mark)}
        frontier.discard(os.getpid())
        found: set[int] = set()
        while frontier:
            pid = frontier.pop()
            if pid in found:
                continue
            if pid != self.root:
                stat = self._same(pid)
                if stat is None:
                    self._members.pop(pid, None)  # gone: its pid may be reused
                    self._reapable.discard(pid)
                    continue
                self._remember(pid, stat)
                found.add(pid)
            frontier |= _children(pid) - found
        found.discard(self.root)
        return found

    def signal(self, signum: int, *, orphans: bool = True) -> set[int]:
        """`signum` to the root's group and to every member; returns the members signalled."""
        members = self.scan(orphans=orphans)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, signum)
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)
        return members

    def kill(self) -> set[int]:
        """SIGKILL to all of it, then collect the exits that fell to corral.

        The family is frozen first (SIGSTOP, until a scan finds no one new),
        so a member that keeps forking cannot leave a child behind the sweep.
        """
        frozen: set[int] = set()
        for _ in range(_FREEZE_ROUNDS):
            found = self.signal(signal.SIGSTOP)
            if found <= frozen:
                break
            frozen |= found
        members = self.signal(signal.SIGKILL)
        self.reap()
        return members | frozen

    def alive(self) -> set[int]:
        """Members (root excluded) that still run: not gone, not a zombie."""
        return {pid for pid in self.scan() if (stat := _stat(pid)) is not None and stat[0] != "Z"}

    def reap(self) -> None:
        """Collect members that exited as corral's children (never asyncio's own)."""
        me = os.getpid()
        for pid in list(self._members):
            stat = self._same(pid)
            if stat is None:
                self._members.pop(pid, None)
                self._reapable.discard(pid)
                continue
            if stat[1] == me:
                self._reapable.add(pid)
            if pid in self._reapable and stat[0] == "Z":
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                self._members.pop(pid, None)
                self._reapable.discard(pid)
