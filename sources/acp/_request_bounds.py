"""The bounds on the agent's requests served at once, and which one a request crosses.

Sans-IO: `bounds_for` takes a request's method and the counts the request
server (`_requests.AgentRequests`) keeps, and gives back every bound with
whether it applies to that method, whether it is crossed, and what the agent
reads when it is. The server refuses the request on the first bound both
applying and crossed; see the header of `_requests.py` for why each exists.
"""

from __future__ import annotations

from ._asks import MAX_OPEN_ASKS

__all__ = [
    "ASKING",
    "FREEING",
    "MAX_EXIT_WAITS",
    "MAX_OUTSTANDING",
    "WAITING_CALLS",
    "Bound",
    "bounds_for",
    "first_crossed",
]

MAX_EXIT_WAITS = 64  # terminal/wait_for_exit calls waiting at once
MAX_OUTSTANDING = 128  # the agent's requests being served at once, all kinds
WAITING_CALLS = frozenset({"terminal/wait_for_exit", "terminal/kill", "terminal/release"})
FREEING = frozenset({"terminal/kill", "terminal/release"})
ASKING = frozenset(
    {
        "session/request_permission",
        "elicitation/create",
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
    }
)

# (which bound, applies to the method, crossed, what the agent reads)
Bound = tuple[str, bool, bool, str]


def bounds_for(
    method: str,
    *,
    asks_full: bool,
    open_asks: int,
    exit_waits: int,
    serving: int,
    freeing: int,
) -> tuple[Bound, ...]:
    """Every bound on the agent's requests, as it stands for `method`."""
    return (
        (
            "open_requests",
            method in ASKING,
            asks_full,
            f"{MAX_OPEN_ASKS} requests already wait on a decision",
        ),
        (
            "exit_waits",
            method == "terminal/wait_for_exit",
            exit_waits >= MAX_EXIT_WAITS,
            f"{MAX_EXIT_WAITS} terminal/wait_for_exit calls are already waiting",
        ),
        (
            "outstanding",
            method not in FREEING,
            serving - freeing + open_asks >= MAX_OUTSTANDING,
            f"{MAX_OUTSTANDING} of the agent's requests are being served",
        ),
        (  # kill and release free what waits: bounded on their own, never behind the rest
            "freeing",
            method in FREEING,
            freeing >= MAX_OUTSTANDING,
            f"{MAX_OUTSTANDING} terminal/kill and terminal/release calls are being served",
        ),
    )


def first_crossed(bounds: tuple[Bound, ...], limits_hit: set[str]) -> tuple[str, str] | None:
    """(which bound, what the agent reads) of the first bound crossed, if any.

    A bound that applies and is not crossed is left: it is taken off
    `limits_hit`, so the next crossing of it is news again.
    """
    for bound, applies, crossed, why in bounds:
        if applies and crossed:
            return bound, why
        if applies:
            limits_hit.discard(bound)
    return None
