"""The front's hosts: one `SessionHost` per CPU of each node, started when needed.

`place(placement)` reads the cluster's alive nodes, picks one (`_placement`:
least loaded first, pinned by custom resources), then that node's least
loaded slot (a node has one per CPU Ray gives it: its sessions use its
cores), and answers that slot's host, starting it on the node with node
affinity if it is not running yet. Load
is the front's own count of sessions per host (`opened` / `closed`), so it
needs no call to the hosts. A host found gone (a call to it failed as its
node died or its process was killed) is dropped: its sessions end through
their pumps, and the next session for that node starts a new host, or goes
elsewhere if the node is gone too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ...pipeline.commands import Placement
from ._host import SessionHost
from ._placement import Node, choose, nodes_of

__all__ = ["Host", "Hosts"]

_MAX_CALLS = 100_000  # calls a host runs at once: each session's pull plus its commands
_STOP_WITHIN = 30.0  # a host that does not stop in time is killed


@attrs.define(eq=False)
class Host:
    node: Node
    actor: Any  # the Ray actor handle
    pid: int
    sessions: int = 0
    gone: bool = False


def _slots(node: Node) -> int:
    """Hosts a node gets: one per CPU Ray gives it, so one node's sessions use its cores."""
    return max(1, int(node.resources.get("CPU", 1)))


class Hosts:
    def __init__(self, runtime_options: Mapping[str, Any]) -> None:
        self._remote: Any = ray.remote(SessionHost)  # Ray's types do not follow `.options`
        self._runtime_options = runtime_options
        self._hosts: dict[tuple[str, int], Host] = {}  # by node id and slot
        self._starting: dict[str, asyncio.Future[Host]] = {}
        self._lock = asyncio.Lock()

    def __iter__(self) -> Iterator[Host]:
        return iter(list(self._hosts.values()))

    async def place(self, placement: Placement | None) -> Host:
        nodes = nodes_of(await asyncio.to_thread(ray.nodes))
        load: dict[str, int] = {}
        for (node_id, slot), _ in self._hosts.items():
            load[node_id] = load.get(node_id, 0) + self._load((node_id, slot))
        node = choose(nodes, load, placement)
        slot = min(range(_slots(node)), key=lambda slot: self._load((node.node_id, slot)))
        async with self._lock:  # one host per slot, however many opens race
            host = self._hosts.get((node.node_id, slot))
            if host is None or host.gone:
                host = await self._start(node)
                self._hosts[(node.node_id, slot)] = host
        host.sessions += 1  # counted now: concurrent opens spread
        return host

    def _load(self, key: tuple[str, int]) -> int:
        host = self._hosts.get(key)
        return 0 if host is None or host.gone else host.sessions

    async def _start(self, node: Node) -> Host:
        actor = self._remote.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            num_cpus=0,
            max_concurrency=_MAX_CALLS,
            max_restarts=0,
        ).remote(self._runtime_options)
        pid = await actor.start.remote()
        return Host(node=node, actor=actor, pid=pid)

    def lost(self, host: Host) -> None:
        """A call to `host` failed: no new session goes there."""
        if not host.gone:
            host.gone = True
            ray.kill(host.actor, no_restart=True)  # whatever is left of it

    async def stop(self) -> None:
        """Stop every host (each closes what it still runs); kill the ones that hang."""
        hosts = [host for host in self._hosts.values() if not host.gone]
        self._hosts.clear()

        async def stop_one(host: Host) -> None:
            try:
                async with asyncio.timeout(_STOP_WITHIN):
                    await host.actor.stop.remote()
            except (TimeoutError, ray.exceptions.RayError):
                pass
            ray.kill(host.actor, no_restart=True)

        async with asyncio.TaskGroup() as stopping:
            for host in hosts:
                stopping.create_task(stop_one(host))
