"""The session engine (sans-IO) and its settings."""

from ._engine import Engine
from ._state import EngineSettings, Pending

__all__ = ["Engine", "EngineSettings", "Pending"]
