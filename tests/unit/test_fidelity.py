"""The one check of what an agent can honour (`pipeline/fidelity.py`), without a process."""

from __future__ import annotations

import pytest
from corral.pipeline.commands import McpServer
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentDetails,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    McpTransport,
)
from corral.pipeline.fidelity import is_image, refuse_attachments, refuse_unhonoured

MODEL = ConfigOption(
    id="model", name="Model", live=False, choices=(ConfigChoice(value="m1", label="M1"),)
)
EVERYTHING = AgentDetails(
    capabilities=Capabilities(
        features=frozenset(Capability),
        mcp_transports=(McpTransport.STDIO, McpTransport.HTTP),
    ),
    config_options=(MODEL,),
)
NOTHING = AgentDetails()
HTTP = McpServer(name="web", transport="Http", url="http://127.0.0.1:9/mcp")
SSE = McpServer(name="events", transport="Sse", url="http://127.0.0.1:9/sse")


def spec(**fields: object) -> LaunchSpec:
    return LaunchSpec(session_id="s1", executable="agent", dir="/", **fields)  # type: ignore[arg-type]


def refusal(launch: LaunchSpec, details: AgentDetails) -> CorralError:
    with pytest.raises(CorralError) as refused:
        refuse_unhonoured(launch, details, "Agent")
    return refused.value


def test_an_agent_that_declares_everything_honours_every_option() -> None:
    launch = spec(
        resume="r", fork="f", fork_at="t1", mcp_servers=(HTTP,), configure=(("model", "m1"),)
    )
    refuse_unhonoured(launch, EVERYTHING, "Agent")  # no error


@pytest.mark.parametrize(
    ("fields", "feature", "option"),
    [
        ({"resume": "r"}, "Resume", "resume"),
        ({"fork": "f"}, "Fork", "fork"),
        ({"fork_at": "t1"}, "Fork", "fork_at"),
        ({"mcp_servers": (HTTP,)}, "McpServers", "mcp_servers"),
    ],
)
def test_an_undeclared_capability_is_unsupported_naming_the_option(
    fields: dict[str, object], feature: str, option: str
) -> None:
    error = refusal(spec(**fields), NOTHING)
    assert error.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert (error.fields["feature"], error.fields["option"]) == (feature, option)


def test_an_mcp_transport_the_agent_does_not_list_is_unsupported() -> None:
    error = refusal(spec(mcp_servers=(HTTP, SSE)), EVERYTHING)
    assert error.fields["transport"] == "Sse"
    assert "events" in error.message


@pytest.mark.parametrize(
    ("configure", "says"),
    [((("effort", "high"),), "no option 'effort'"), ((("model", "m9"),), "not a valid value")],
)
def test_a_configure_value_not_offered_is_invalid_configuration(
    configure: tuple[tuple[str, str], ...], says: str
) -> None:
    error = refusal(spec(configure=configure), EVERYTHING)
    assert error.kind is ErrorKind.INVALID_CONFIGURATION
    assert error.fields["option"] == configure[0][0]
    assert says in error.message


def test_an_option_that_is_not_live_can_still_be_chosen_at_open() -> None:
    refuse_unhonoured(spec(configure=(("model", "m1"),)), EVERYTHING, "Agent")


@pytest.mark.parametrize(
    ("attachment", "image"),
    [
        ("shot.png", True),
        ("dir/Photo.JPEG", True),
        ("file:///tmp/a.webp", True),
        ("data:image/png;base64,AAAA", True),
        ("notes.md", False),
        ("data:text/plain,hi", False),
        ("png", False),
    ],
)
def test_images_are_told_by_suffix_or_data_uri(attachment: str, image: bool) -> None:
    assert is_image(attachment) is image


def test_an_image_attachment_needs_images() -> None:
    refuse_attachments(("a.png",), EVERYTHING, "Agent")
    refuse_attachments(("notes.md",), NOTHING, "Agent")
    with pytest.raises(CorralError) as refused:
        refuse_attachments(("notes.md", "a.png"), NOTHING, "Agent")
    assert refused.value.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert (refused.value.fields["feature"], refused.value.fields["option"]) == (
        "Images",
        "attachments",
    )
