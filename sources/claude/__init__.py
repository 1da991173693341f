"""Claude Code: the `claude` CLI driven over stream-json with its control protocol.

`catalog_entry()` is this source's line in the catalog; the driver,
protocol (sans-IO), and transcript reader live in the private modules.
`read_native_transcript(path)` replays Claude Code's own session files.
"""

from ._catalog import INSTALL_HINT, catalog_entry, probe
from ._driver import ClaudeDriver
from ._protocol import ClaudeProtocol
from ._transcript import read_native_transcript

__all__ = [
    "INSTALL_HINT",
    "ClaudeDriver",
    "ClaudeProtocol",
    "catalog_entry",
    "probe",
    "read_native_transcript",
]
