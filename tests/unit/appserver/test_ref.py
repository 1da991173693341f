"""The `{"appserver": {...}}` agent ref, read from an `open` frame of the line protocol.

The seed's `AgentRef` lists only a catalog id and `{"acp": ...}`: the
`appserver` ref is corral's addition (issue 6), so these frames are not
checked against the line-protocol schema; the decoder is the contract.
"""

from __future__ import annotations

import pytest
from corral.pipeline.commands import AppServerRef, Frame, OpenCmd
from corral.pipeline.events import ShapeError


def open_frame(agent: object) -> dict[str, object]:
    return {"id": 1, "cmd": "open", "agent": agent, "dir": "/work"}


def test_an_appserver_ref_reads_with_its_name_path_and_args() -> None:
    raw = open_frame({"appserver": {"name": "mine", "path": "/bin/mine", "args": ["--stdio"]}})
    command = Frame.from_wire(raw).command
    assert isinstance(command, OpenCmd)
    assert command.options.agent == AppServerRef(name="mine", path="/bin/mine", args=("--stdio",))


def test_args_are_optional_and_the_ref_writes_back_the_same() -> None:
    raw = open_frame({"appserver": {"name": "mine", "path": "/bin/mine"}})
    frame = Frame.from_wire(raw)
    assert isinstance(frame.command, OpenCmd)
    assert frame.command.options.agent == AppServerRef(name="mine", path="/bin/mine")
    assert frame.to_wire()["agent"] == raw["agent"]


def test_an_appserver_ref_without_a_path_says_where() -> None:
    with pytest.raises(ShapeError) as bad:
        Frame.from_wire(open_frame({"appserver": {"name": "mine"}}))
    assert bad.value.path == "agent.appserver.path"
