"""`corral import`: the agents' own transcripts, normalized into the archive.

A source (the provider's native transcript reader, `sources/<name>/`)
through the engine (`actors/replay`) into a sink (`sinks/transcript`): a
join of all three, so it lives in `actors/`, above sources and sinks.

- `import_paths`, `ImportReport`, `Progress`: import files and folders.
- `register_cli`: the `corral import PATH...` command.
"""

from ._cli import register_cli
from ._importer import ImportReport, Progress, import_paths

__all__ = ["ImportReport", "Progress", "import_paths", "register_cli"]
