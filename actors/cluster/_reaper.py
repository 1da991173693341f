"""A host's agents never outlive the host: a watchdog process ends them.

A Ray host can die without running any code of ours (its node's raylet
killed, the worker process SIGKILLed), and its agents run in their own
process groups, so nothing would stop them. The host starts one small
watchdog process in a session of its own and tells it, on a pipe, each
agent's process group as it starts (`+PGID`) and ends (`-PGID`). When the
pipe ends, because the host closed it or because the host died and the
kernel closed it, the watchdog sends SIGTERM to every group still listed,
then SIGKILL a moment later, and exits.
"""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["WATCHDOG", "AgentReaper"]

WATCHDOG = """
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    sign, pgid = line[0], int(line[1:])
    (groups.add if sign == "+" else groups.discard)(pgid)
for signum in (signal.SIGTERM, signal.SIGKILL):
    for pgid in groups:
        try:
            os.killpg(pgid, signum)
        except OSError:
            pass
    if groups and signum == signal.SIGTERM:
        time.sleep(2)
"""


class AgentReaper:
    def __init__(self) -> None:
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # a signal to the host's group leaves it be
        )

    def _tell(self, line: str) -> None:
        stdin = self._watchdog.stdin
        if stdin is not None and not stdin.closed:
            stdin.write(line.encode())
            stdin.flush()

    def keep(self, pid: int | None) -> None:
        """Watch the agent `pid`'s process group: only one it leads (never the host's own)."""
        if pid is None or pid == os.getpid():
            return  # an in-process agent (the mock): the host is its process
        try:
            leads = os.getpgid(pid) == pid != os.getpgrp()
        except ProcessLookupError:
            return  # gone already
        if leads:
            self._tell(f"+{pid}\n")

    def forget(self, pid: int | None) -> None:
        if pid is not None:
            self._tell(f"-{pid}\n")

    def close(self) -> None:
        """Every agent has ended: the watchdog ends too."""
        if self._watchdog.stdin is not None:
            self._watchdog.stdin.close()
        self._watchdog.wait()
