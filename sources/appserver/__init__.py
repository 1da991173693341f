"""Agents speaking the app-server JSON-RPC wire (threads, turns, items, approvals)."""

from ._catalog import agent_entry, catalog_entry
from ._driver import AppServerDriver
from ._normalize import AppServerNormalizer

__all__ = ["AppServerDriver", "AppServerNormalizer", "agent_entry", "catalog_entry"]
