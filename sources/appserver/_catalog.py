"""Catalog entries for agents on the app-server wire.

- `catalog_entry()`: the `appserver` wire entry that drives ad-hoc
  `{"appserver": {"name", "path", "args"}}` agents. It is `wire_only`:
  discovery never looks for it; the finder resolves an ad-hoc ref to this
  entry with an installation whose `executable_path` is the ref's `path`
  and whose `acp_args` carry the ref's `args`.
- `agent_entry(...)`: a discoverable app-server agent with its own catalog
  id (found on PATH or in `known_dirs` like any other agent). Its id is the
  `agentKey` corral sends in `thread/start`.
"""

from __future__ import annotations

from ..catalog import CatalogEntry
from ._details import appserver_details
from ._driver import AppServerDriver

__all__ = ["agent_entry", "catalog_entry"]


def catalog_entry() -> CatalogEntry:
    return CatalogEntry(
        id="appserver",
        name="App-server agent",
        executable="",
        install_hint='name the agent with {"appserver": {"name", "path", "args"}}',
        make_driver=AppServerDriver,
        details=appserver_details(),
        wire_only=True,
    )


def agent_entry(
    *,
    id: str,
    name: str,
    executable: str,
    install_hint: str,
    known_dirs: tuple[str, ...] = (),
) -> CatalogEntry:
    """A named app-server agent, discovered like any catalog agent."""
    return CatalogEntry(
        id=id,
        name=name,
        executable=executable,
        install_hint=install_hint,
        make_driver=AppServerDriver,
        details=appserver_details(),
        known_dirs=known_dirs,
    )
