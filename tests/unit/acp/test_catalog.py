"""The ACP catalog entries: ids, launch lines, the wire-only ad-hoc entry."""

from __future__ import annotations

from corral.pipeline.driver import LaunchSpec
from corral.pipeline.events import AgentInstallation, InstallationSource
from corral.pipeline.telemetry import NULL_TELEMETRY
from corral.sources.acp import AcpDriver, catalog_entries


def driver_for(agent_id: str, *, acp_args: tuple[str, ...] | None = None) -> AcpDriver:
    entry = next(e for e in catalog_entries(environ={"PATH": "/bin"}) if e.id == agent_id)
    installation = AgentInstallation(
        id=agent_id,
        name=agent_id,
        executable_path=f"/opt/{agent_id}",
        source=InstallationSource.PATH,
        acp_args=acp_args,
    )
    launch = LaunchSpec(
        session_id="s1",
        executable=installation.executable_path,
        dir="/work/project",
        args=("--extra",),
        env=(("FOO", "bar"),),
    )
    driver = entry.make_driver(installation, launch, NULL_TELEMETRY)
    assert isinstance(driver, AcpDriver)
    return driver


def test_the_catalog_has_every_acp_agent_and_one_wire_only_entry() -> None:
    entries = {e.id: e for e in catalog_entries()}
    assert set(entries) == {
        "acp",
        "gemini",
        "opencode",
        "copilot",
        "claude-acp",
        "codex-acp",
        "qwen",
    }
    assert [e.id for e in entries.values() if e.wire_only] == ["acp"]
    assert all(e.probe is not None for e in entries.values())


def test_launch_lines_are_exact() -> None:
    assert driver_for("gemini").argv() == ["/opt/gemini", "--acp", "--extra"]
    assert driver_for("opencode").argv() == [
        "/opt/opencode",
        "acp",
        "--cwd",
        "/work/project",
        "--extra",
    ]
    assert driver_for("copilot").argv() == ["/opt/copilot", "--acp", "--extra"]
    assert driver_for("claude-acp").argv() == ["/opt/claude-acp", "--extra"]
    assert driver_for("codex-acp").argv() == [
        "/opt/codex-acp",
        "-c",
        'approval_policy="untrusted"',
        "-c",
        'sandbox_mode="danger-full-access"',
        "--extra",
    ]
    assert driver_for("qwen").argv() == ["/opt/qwen", "--acp", "--extra"]


def test_an_ad_hoc_agent_gets_its_refs_args_and_the_sessions_env() -> None:
    driver = driver_for("acp", acp_args=("serve", "--stdio"))
    assert driver.argv() == ["/opt/acp", "serve", "--stdio", "--extra"]
    env = driver.env()
    assert env["FOO"] == "bar" and env["PWD"] == "/work/project" and env["PATH"] == "/bin"
