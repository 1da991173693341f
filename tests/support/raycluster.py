"""A two-node Ray cluster on this machine, inside a private network namespace.

Ray binds every interface it finds; inside `unshare -n` there is only a
loopback, so nothing leaves the machine. An anchor process (`sleep`) holds
the namespace; every other process joins it with `nsenter`: the head and
the worker node (`ray start --block`, each with its own custom resource),
and whatever talks to them (`corral serve --ray`). Each gets a process
group of its own.

Teardown ends every process in the namespace by its pid (SIGTERM, then
SIGKILL), the anchor last; `leftovers()` lists what is still in it, so a
test can assert that nothing it started outlived it. Node death is
detected within a few seconds (the GCS health checks are tightened).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["HEAD_RESOURCE", "WORKER_RESOURCE", "RayCluster"]

HEAD_RESOURCE = "corral_head"
WORKER_RESOURCE = "corral_worker"
PORT = 6390
_RAY = str(Path(sys.executable).with_name("ray"))
_FAST_HEALTH = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",  # loopback only, inside the namespace
}
_WAIT_FOR_NODES = """
import sys, time, ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
deadline = time.monotonic() + 120
while sum(1 for n in ray.nodes() if n["Alive"]) < int(sys.argv[2]):
    assert time.monotonic() < deadline, ray.nodes()
    time.sleep(0.2)
"""


def _netns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


class RayCluster:
    address = f"127.0.0.1:{PORT}"

    def __init__(self, tmp: Path, env: dict[str, str] | None = None) -> None:
        """`env`: added to the nodes' environment (what their hosts' agents see)."""
        self.tmp = tmp
        self.env = {**os.environ, **_FAST_HEALTH, **(env or {})}
        self.anchor = subprocess.Popen(
            ["unshare", "-n", "sh", "-c", "ip link set lo up && exec sleep infinity"],
            start_new_session=True,
        )
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}

    def prefix(self) -> list[str]:
        """What runs a command inside the namespace."""
        return ["nsenter", "-t", str(self.anchor.pid), "-n", "--"]

    def _namespace(self) -> str:
        for _ in range(100):
            inode = _netns(self.anchor.pid)
            if inode is not None and inode != _netns(os.getpid()):
                return inode
            time.sleep(0.05)  # unshare has not exec'd sleep yet
        raise AssertionError("the network namespace did not come up")

    def start(self) -> RayCluster:
        self._namespace()
        common = [
            "--block",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=1",
            "--object-store-memory=80000000",
            "--disable-usage-stats",
        ]
        self.nodes["head"] = self._spawn(
            "head",
            [
                _RAY,
                "start",
                "--head",
                f"--port={PORT}",
                "--include-dashboard=false",
                *common,
                f"--resources={json.dumps({HEAD_RESOURCE: 1})}",
            ],
        )
        self.wait_for_nodes(1)
        self.nodes["worker"] = self._spawn(
            "worker",
            [
                _RAY,
                "start",
                f"--address={self.address}",
                *common,
                f"--resources={json.dumps({WORKER_RESOURCE: 1})}",
            ],
        )
        self.wait_for_nodes(2)
        return self

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = (self.tmp / f"{name}.log").open("wb")
        return subprocess.Popen(
            [*self.prefix(), *argv], env=self.env, stdout=log, stderr=log, start_new_session=True
        )

    def wait_for_nodes(self, count: int) -> None:
        subprocess.run(
            [*self.prefix(), sys.executable, "-c", _WAIT_FOR_NODES, self.address, str(count)],
            env=self.env,
            check=True,
            timeout=150,
            stdout=subprocess.DEVNULL,
        )

    def processes(self) -> dict[int, str]:
        """pid → command line of every process in the namespace but the anchor."""
        inode = _netns(self.anchor.pid)
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.anchor.pid:
                continue
            if inode is not None and _netns(int(entry.name)) == inode:
                try:
                    found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
        return {pid: cmd.decode(errors="replace") for pid, cmd in found.items()}

    def raylet_of(self, node: str) -> int:
        """The raylet pid of `node` (its resource names it on the command line)."""
        resource = HEAD_RESOURCE if node == "head" else WORKER_RESOURCE
        for pid, command in self.processes().items():
            if "/raylet" in command.split(" ")[0] and resource in command:
                return pid
        raise AssertionError(f"no raylet for {node}: {self.processes()}")

    def leftovers(self, keep: set[int]) -> dict[int, str]:
        """Processes in the namespace other than `keep` (and their zombies' absence)."""
        return {pid: cmd for pid, cmd in self.processes().items() if pid not in keep and cmd}

    def stop(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)
            deadline = time.monotonic() + 10
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.1)
        for process in self.nodes.values():
            process.wait(timeout=10)
        self.anchor.kill()
        self.anchor.wait()
