"""The default catalog: one line per agent corral can drive.

Providers register here; `sources/<provider>/` holds everything else.
"""

from __future__ import annotations

from .acp import catalog_entries as acp_entries
from .appserver import catalog_entry as appserver
from .catalog import Catalog
from .claude import catalog_entry as claude
from .codex import catalog_entry as codex
from .copilot import catalog_entry as copilot_native

__all__ = ["default_catalog"]


def default_catalog() -> Catalog:
    return Catalog([claude(), codex(), *acp_entries(), copilot_native(), appserver()])
