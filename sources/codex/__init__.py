"""Codex: the `codex app-server` wire, and Codex's `EventMsg` (rollout transcripts).

- `catalog_entry()`: Codex in corral's catalog (discovery, launch, probe);
- `CodexDriver`: one session over `codex app-server` (JSON-RPC over stdio);
- `AppServerNormalizer`, `EventMsgNormalizer`: the sans-IO translations;
- `read_native_transcript(path)`: a Codex rollout file as replay items.
"""

from ._appserver import AppServerNormalizer
from ._catalog import catalog_entry
from ._driver import CodexDriver
from ._eventmsg import EventMsgNormalizer
from ._rollout import RolloutReader, read_native_transcript

__all__ = [
    "AppServerNormalizer",
    "CodexDriver",
    "EventMsgNormalizer",
    "RolloutReader",
    "catalog_entry",
    "read_native_transcript",
]
