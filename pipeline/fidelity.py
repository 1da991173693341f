"""What the agent can honour: the one place an option is refused instead of dropped.

A source declares what its agent can do in `AgentDetails` (its
`Capabilities.features`, its `mcp_transports`, the `config_options` it
offers), known for certain once the handshake is done. Options the app
asks for that the agent cannot honour must never be accepted and then
ignored: the app would believe a session resumed, forked, reached its MCP
servers or runs the model it chose when it does not. So every `open` (and
`generate`, which opens) is checked here, once, against the details the
handshake returned, and every prompt's attachments are checked here too.
Sources do not repeat these decisions; they only declare capabilities.

What flows in: the `LaunchSpec` (or a prompt's attachments) and the
agent's `AgentDetails`. What flows out: nothing, or a `CorralError`:

- `resume` without `Resume`, `fork` or `fork_at` without `Fork`, an MCP
  server over a transport the agent does not list, an image attachment to
  an agent without `Images`: UnsupportedFeature, with `feature` (the
  capability, or `McpServers`) and `option` (the open field) beside the
  message;
- a `configure` value at open: the engine's `configure` rules, minus
  liveness (nothing is live before the session exists). An option the
  agent does not offer, or a value it does not accept, is
  InvalidConfiguration with `option`.

The other half of fidelity is that no agent request is left unanswered:
a source either surfaces a request to the app (`RequestAsked`) or answers
it at once with a decline the agent understands, and reports that with a
Diagnostic whose `extensions` carry `DECLINED` ("corral/declined") naming
the method or event type. Sources use that one marker.

Plain synchronous functions: no I/O, testable without an event loop.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .commands import McpServer
from .driver import LaunchSpec
from .errors import CorralError, ErrorKind
from .events import AgentDetails, Capability

__all__ = [
    "DECLINED",
    "IMAGE_SUFFIXES",
    "is_image",
    "refuse_attachments",
    "refuse_mcp",
    "refuse_undeclared",
    "refuse_unhonoured",
]

DECLINED = "corral/declined"  # Diagnostic extension: a request corral declined itself

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})


def is_image(attachment: str) -> bool:
    """An attachment that is an image: by its file suffix, or a `data:image/...` URI."""
    if attachment.startswith("data:"):
        return attachment[5:].lower().startswith("image/")
    path = attachment.split("?", 1)[0].split("#", 1)[0]
    return os.path.splitext(path)[1].lower() in IMAGE_SUFFIXES


def _unsupported(message: str, *, feature: str, option: str) -> CorralError:
    return CorralError(ErrorKind.UNSUPPORTED_FEATURE, message, feature=feature, option=option)


def refuse_unhonoured(launch: LaunchSpec, details: AgentDetails, agent: str) -> None:
    """Raise for the first open option `agent` (its name) cannot honour; see the header."""
    refuse_undeclared(launch, details, agent)
    _refuse_configure(launch.configure, details, agent)


def refuse_undeclared(launch: LaunchSpec, details: AgentDetails, agent: str) -> None:
    """The capability half (resume, fork, MCP), for a source to call mid-handshake.

    A wire that hands `resume` or the MCP servers to the agent in its
    handshake (ACP's `session/new`) learns the capabilities first and calls
    this before using them, so nothing is half-done; the Runtime calls it
    again, with the rest, once the handshake is over.
    """
    features = details.capabilities.features
    if launch.resume is not None and Capability.RESUME not in features:
        raise _unsupported(
            f"{agent} cannot resume sessions", feature=Capability.RESUME.value, option="resume"
        )
    for option, value in (("fork", launch.fork), ("fork_at", launch.fork_at)):
        if value is not None and Capability.FORK not in features:
            raise _unsupported(
                f"{agent} cannot fork sessions", feature=Capability.FORK.value, option=option
            )
    refuse_mcp(launch.mcp_servers, details, agent)


def refuse_mcp(servers: Iterable[McpServer], details: AgentDetails, agent: str) -> None:
    """UnsupportedFeature for an MCP server over a transport the agent does not list."""
    offered = {transport.value for transport in details.capabilities.mcp_transports}
    for server in servers:
        if server.transport not in offered:
            reach = ", ".join(sorted(offered)) or "none"
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"{agent} cannot reach MCP server {server.name!r} over {server.transport} "
                f"(transports it supports: {reach})",
                feature="McpServers",
                option="mcp_servers",
                transport=server.transport,
            )


def _refuse_configure(
    chosen: Iterable[tuple[str, object]], details: AgentDetails, agent: str
) -> None:
    offered = {option.id: option for option in details.config_options}
    for option, value in chosen:
        known = offered.get(option)
        if known is None:
            names = ", ".join(offered) or "none"
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{agent} has no option {option!r} (options: {names})",
                option=option,
            )
        if not isinstance(value, str | bool) or not known.accepts(value):
            allowed = (
                "true or false" if known.boolean else ", ".join(c.value for c in known.choices)
            )
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{value!r} is not a valid value for {option} (allowed: {allowed})",
                option=option,
            )


def refuse_attachments(attachments: Iterable[str], details: AgentDetails, agent: str) -> None:
    """Raise UnsupportedFeature for an image attachment to an agent without `Images`."""
    if Capability.IMAGES in details.capabilities.features:
        return
    for attachment in attachments:
        if is_image(attachment):
            raise _unsupported(
                f"{agent} cannot take image attachments ({attachment})",
                feature=Capability.IMAGES.value,
                option="attachments",
            )
