"""Joining a Ray cluster from the front, with corral's stdout kept clean.

`connect(address)` is `ray.init`: `local` starts a private Ray instance on
this machine's cores, anything else (`HOST:PORT`, `auto`) joins an existing
cluster. Ray's own chatter must never reach the line protocol: worker logs
stay on the workers (`log_to_driver=False`), and `private_stdout` gives the
line protocol its own copy of fd 1 and points fd 1 at stderr before Ray
starts (see `_stdout.py`), so whatever Ray (or a library it loads) prints
lands on stderr.
"""

from __future__ import annotations

import logging

import ray

__all__ = ["connect", "disconnect"]

LOCAL = "local"


def connect(address: str) -> None:
    """`ray.init` for `serve --ray ADDRESS` (blocking: call it off the event loop)."""
    if ray.is_initialized():
        return
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address == LOCAL:  # Ray's own "local": a new instance, never one it finds running
        ray.init(address=LOCAL, include_dashboard=False, **quiet)  # type: ignore[arg-type]
    else:
        ray.init(address=address, **quiet)  # type: ignore[arg-type]


def disconnect() -> None:
    ray.shutdown()
