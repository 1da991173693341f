"""The mock agent in the catalog: one entry per script, like any other agent.

`catalog_entry(script)` is what `corral serve --mock SCRIPT`, `corral demo`
and `Runtime(mock=script)` put in their catalog. The entry is `builtin`
(no executable to find, always installed), its details are what the script
can do, and its driver plays the script in-process, or in a child process
when the script asks for one (`"process": true`).
"""

from __future__ import annotations

from ...pipeline.driver import Driver, LaunchSpec
from ...pipeline.events import AgentInstallation
from ...pipeline.telemetry import SessionTelemetry
from ..catalog import CatalogEntry
from ._child import ProcessMockDriver
from ._driver import MockDriver, mock_details
from ._script import MockScript

__all__ = ["catalog_entry"]


def catalog_entry(
    script: MockScript, *, agent_id: str = "mock", name: str = "Mock agent"
) -> CatalogEntry:
    def make_driver(
        installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
    ) -> Driver:
        if script.process:
            return ProcessMockDriver(script, spec, telemetry)
        return MockDriver(script, spec)

    return CatalogEntry(
        id=agent_id,
        name=name,
        executable="",
        install_hint="built in: corral serve --mock SCRIPT",
        make_driver=make_driver,
        details=mock_details(script),
        builtin=True,
    )
