"""The scripted mock agent: for tests, demos and apps testing without agents.

`catalog_entry(script)` makes it an ordinary catalog entry.
"""

from ._catalog import catalog_entry
from ._child import ProcessMockDriver
from ._driver import MockDriver, mock_details
from ._script import MockScript, load_script, parse_script

__all__ = [
    "MockDriver",
    "MockScript",
    "ProcessMockDriver",
    "catalog_entry",
    "load_script",
    "mock_details",
    "parse_script",
]
