"""Where a session goes on the cluster: least loaded first, pinned by resources.

Pure functions over a snapshot of the cluster's nodes (`ray.nodes()`, read
by `_hosts.py`): `choose` takes the alive nodes, how many sessions each host
runs, and the session's `Placement`, and answers one node or why none fits.
Ties go to the node with the smaller label, so placement is deterministic
for a given load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ...pipeline.commands import Placement
from ...pipeline.errors import CorralError, ErrorKind

__all__ = ["Node", "choose", "nodes_of"]


@attrs.frozen(kw_only=True)
class Node:
    node_id: str  # Ray's hex id
    label: str  # bounded and readable: the node's address (the `node` metric label)
    resources: Mapping[str, float] = attrs.field(factory=dict)

    def has(self, placement: Placement | None) -> bool:
        wanted = () if placement is None else placement.resources
        return all(self.resources.get(name, 0.0) >= amount for name, amount in wanted)


def nodes_of(snapshot: Sequence[Mapping[str, object]]) -> list[Node]:
    """The alive nodes of a `ray.nodes()` answer."""
    found = []
    for entry in snapshot:
        if not entry.get("Alive"):
            continue
        resources = entry.get("Resources")
        found.append(
            Node(
                node_id=str(entry["NodeID"]),
                label=f"{entry.get('NodeManagerAddress', '?')}:{entry.get('NodeManagerPort', 0)}",
                resources=dict(resources) if isinstance(resources, Mapping) else {},
            )
        )
    return found


def choose(nodes: Sequence[Node], load: Mapping[str, int], placement: Placement | None) -> Node:
    """The least loaded node that has what `placement` asks for."""
    if not nodes:
        raise CorralError(ErrorKind.PROTOCOL_FAILED, "no node of the Ray cluster is alive")
    fitting = [node for node in nodes if node.has(placement)]
    if not fitting:
        wanted = dict(placement.resources) if placement is not None else {}
        raise CorralError(
            ErrorKind.INVALID_REQUEST,
            f"no node of the Ray cluster has the resources {wanted}",
            resources=wanted,
        )
    return min(fitting, key=lambda node: (load.get(node.node_id, 0), node.label))
