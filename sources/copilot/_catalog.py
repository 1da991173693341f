"""The catalog entry of Copilot on its native wire (`copilot-native`).

The `copilot` id drives Copilot over ACP (`copilot --acp`, another source);
`copilot-native` drives the same executable in its SDK server mode
(`--headless --stdio`), on the SessionEvents Copilot itself emits.
"""

from __future__ import annotations

from ...pipeline.driver import Driver, LaunchSpec
from ...pipeline.events import AgentInstallation
from ...pipeline.telemetry import SessionTelemetry
from ..catalog import CatalogEntry, NativeTranscripts
from ._details import copilot_details
from ._driver import CopilotDriver
from ._native_wire import read_copilot_wire, recognizes_copilot_wire_line
from ._transcript import read_native_transcript, recognizes_line

__all__ = ["catalog_entry"]


def _driver(
    installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
) -> Driver:
    return CopilotDriver(installation, spec, telemetry)


def catalog_entry() -> CatalogEntry:
    return CatalogEntry(
        id="copilot-native",
        name="GitHub Copilot CLI (native events)",
        executable="copilot",
        install_hint="npm install -g @github/copilot",
        make_driver=_driver,
        details=copilot_details(),
        native_transcripts=NativeTranscripts(  # ~/.copilot/session-state/<id>/events.jsonl
            format="copilot",  # not the entry's id: imported sessions are `copilot`'s
            name="GitHub Copilot CLI",
            recognizes=recognizes_line,
            read=read_native_transcript,
        ),
        recorded_wire=NativeTranscripts(  # <transcript id>.wire.jsonl, beside a corral transcript
            format="copilot-wire",
            name="GitHub Copilot CLI",
            recognizes=recognizes_copilot_wire_line,
            read=read_copilot_wire,
        ),
    )
