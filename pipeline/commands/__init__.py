"""Commands from the app, as typed values: what one `Frame` asks for.

`command_from_wire` reads the `cmd`-tagged object of one frame into one of
the command classes below, or raises `ShapeError` naming the bad field;
`command_to_wire` writes one back (for clients and tests that speak to
`corral serve`). `Frame` pairs a command with the id its reply will carry.
Commands are plain frozen values so they can cross a process boundary.

Encoding is canonical: an optional field at its default (null, `[]`, `{}`,
false) is left out, as an app would write it. So `from_wire(to_wire(x)) ==
x` always, and `to_wire(from_wire(j)) == j` for every canonical `j`.
"""

from ._codec import COMMAND_NAMES, Frame, command_from_wire, command_to_wire
from ._commands import (
    AnswerCmd,
    CancelCmd,
    CloseCmd,
    Command,
    CompactCmd,
    ConfigureCmd,
    DequeueCmd,
    DiscoverCmd,
    GenerateCmd,
    InfoCmd,
    OpenCmd,
    PlanUsageCmd,
    ProbeCmd,
    PromptCmd,
    RollbackCmd,
    RollbackScope,
)
from ._options import (
    AcpRef,
    AgentRef,
    AppServerRef,
    McpServer,
    PermissionMode,
    Placement,
    SessionOptions,
    agent_ref_from_wire,
    agent_ref_to_wire,
)

__all__ = [
    "COMMAND_NAMES",
    "AcpRef",
    "AgentRef",
    "AnswerCmd",
    "AppServerRef",
    "CancelCmd",
    "CloseCmd",
    "Command",
    "CompactCmd",
    "ConfigureCmd",
    "DequeueCmd",
    "DiscoverCmd",
    "Frame",
    "GenerateCmd",
    "InfoCmd",
    "McpServer",
    "OpenCmd",
    "PermissionMode",
    "Placement",
    "PlanUsageCmd",
    "ProbeCmd",
    "PromptCmd",
    "RollbackCmd",
    "RollbackScope",
    "SessionOptions",
    "agent_ref_from_wire",
    "agent_ref_to_wire",
    "command_from_wire",
    "command_to_wire",
]
