"""What corral can do with an app-server agent, from what its `initialize` says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.events import AgentDetails, Capabilities, Capability

__all__ = ["appserver_details"]

_ALWAYS = frozenset({Capability.STEER, Capability.RESUME, Capability.CONTEXT_USAGE})


def appserver_details(hello: Mapping[str, Any] | None = None) -> AgentDetails:
    """`hello` is the `initialize` result; without it, what the wire always offers."""
    features = set(_ALWAYS)
    server = hello.get("capabilities") if hello is not None else None
    if hello is None or (isinstance(server, Mapping) and server.get("approvalResolve") is True):
        features.add(Capability.PERMISSIONS)
    agent = hello.get("userAgent") if hello is not None else None
    return AgentDetails(
        version=agent if isinstance(agent, str) else None,
        capabilities=Capabilities(features=frozenset(features)),
    )
