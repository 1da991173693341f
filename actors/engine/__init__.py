"""The session engine (sans-IO), its settings and its turn phases."""

from ._engine import Engine
from ._phase import EngineBug, Phase
from ._state import EngineSettings, Pending

__all__ = ["Engine", "EngineBug", "EngineSettings", "Pending", "Phase"]
