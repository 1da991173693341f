"""The ACP source: any Agent Client Protocol agent, as corral's events.

corral is a full ACP client: it launches the agent, completes the
handshake (initialize → authenticate when needed → session/new or
session/load), sends prompts and cancels, answers permission requests by
option kind, serves `fs` reads and writes beneath the session directory
once the policy allowed them, and turns every `session/update` into
normalized events. `catalog_entries()` lists the ACP agents corral knows (Gemini,
opencode, Copilot, the Claude and Codex adapters, Qwen) and the wire-only
`acp` entry behind ad-hoc `{"acp": {...}}` agents.
"""

from ._catalog import RECIPES, catalog_entries
from ._driver import AcpDriver, AcpRecipe
from ._replay import AcpReplay
from ._translate import Translator

__all__ = ["RECIPES", "AcpDriver", "AcpRecipe", "AcpReplay", "Translator", "catalog_entries"]
