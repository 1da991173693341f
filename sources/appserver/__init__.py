"""Agents speaking the app-server JSON-RPC wire (threads, turns, items, approvals)."""

from ._catalog import catalog_entry
from ._driver import AppServerDriver
from ._normalize import AppServerNormalizer

__all__ = ["AppServerDriver", "AppServerNormalizer", "catalog_entry"]
