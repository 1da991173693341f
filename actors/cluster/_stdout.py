"""Before Ray starts: the line protocol keeps fd 1 to itself; Ray is optional.

Importing nothing of Ray: `serve --ray` calls these before it connects.
"""

from __future__ import annotations

import importlib.util
import os
from typing import BinaryIO

__all__ = ["private_stdout", "ray_missing"]


def private_stdout() -> BinaryIO:
    """The line protocol's stdout; fd 1 is stderr from now on, for whatever else prints."""
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return stdout


def ray_missing() -> bool:
    """Whether the `ray` extra is not installed."""
    return importlib.util.find_spec("ray") is None
