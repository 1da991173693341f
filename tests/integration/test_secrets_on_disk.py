"""No secret reaches disk, nor anyone's `ps`: a real `corral serve`, its files, its argv.

- a session's transcript and its raw wire recording (`--record-wire`) hold
  neither the provider keys an agent streams (split across deltas and
  across wire messages) nor the values of the secret-named variables the
  app passed in `open`'s `env`;
- a Claude session with an MCP server carrying an env secret and a header
  starts `claude` with no secret on its command line: the configuration is
  in a 0600 file in a private directory, gone once the session is closed;
- metrics served on anything but loopback earn a warning on stderr.

Secret-shaped values are assembled at run time so none is committed.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.serve import ServeProcess

STARTUP = 30.0
KEY = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aEuY"
SESSION_SECRET = "tr0ub4dor" + "&3-horse"
URL_PASSWORD = "s3cr3t" + "-Pa55"


@pytest_asyncio.fixture
async def serves() -> AsyncIterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for serve in started:
        await serve.kill()


def _delta(text: str) -> dict[str, object]:
    return {"Emit": {"TextDelta": {"message_id": "m1", "text": text}}}


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _pieces(secret: str) -> list[str]:
    return [secret[i : i + 6] for i in range(0, len(secret) - 5)]


async def test_transcript_and_wire_recording_hold_no_secret(
    tmp_path: Path, serves: list[ServeProcess]
) -> None:
    said = (
        f"the key is {KEY}; the db password is {SESSION_SECRET}; "
        f"clone https://ci:{URL_PASSWORD}@git.example.com/r.git and go"
    )
    script = {
        "process": True,  # a real child: its lines cross a pipe and the wire is recorded
        "turns": [
            [
                *[_delta(piece) for piece in _split(said, 7)],
                {"Emit": {"MessageEnded": {"message_id": "m1"}}},
                {"End": {"Completed": {"source": "Protocol"}}},
            ]
        ],
    }
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script))
    transcripts = tmp_path / "transcripts"
    serve = await ServeProcess.start(
        *("--mock", str(script_path), "--transcripts", str(transcripts), "--record-wire"),
        env={"CORRAL_HOME": str(tmp_path / "home")},
    )
    serves.append(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    opened = await serve.ok(
        {
            "cmd": "open",
            "agent": "mock",
            "dir": str(tmp_path),
            "env": {"DB_PASSWORD": SESSION_SECRET, "LANG": "C.UTF-8"},
        }
    )
    session = opened["id"]
    await serve.ok({"cmd": "prompt", "session": session, "text": "say it"})
    await serve.wait_event(session, "TurnEnded")
    # The app gets what the agent said: redaction is for what reaches disk.
    streamed = "".join(
        event["kind"]["TextDelta"]["text"]
        for event in serve.events(session)
        if isinstance(event["kind"], dict) and "TextDelta" in event["kind"]
    )
    assert streamed == said
    await serve.ok({"cmd": "close", "session": session})
    assert await serve.finish() == 0

    files = sorted(path for path in transcripts.rglob("*") if path.is_file())
    assert any(path.name.endswith(".wire.jsonl") for path in files), files
    assert any(path.name.endswith(".jsonl") and "wire" not in path.name for path in files)
    for path in files:
        on_disk = path.read_bytes().decode("utf-8", "replace")
        for secret in (KEY.removeprefix("sk-ant-api03-"), SESSION_SECRET, URL_PASSWORD):
            for piece in _pieces(secret):
                assert piece not in on_disk, (path.name, piece)
    wire = next(path for path in files if path.name.endswith(".wire.jsonl")).read_text()
    assert "[REDACTED:session_secret]" in wire and "[REDACTED:anthropic_key]" in wire


FAKE_CLAUDE = Path(__file__).parents[1] / "fixtures" / "claude" / "fake_claude.py"


def _fake_claude(tmp_path: Path) -> Path:
    """The test suite's stand-in `claude`, first recording its argv and MCP config file."""
    script = tmp_path / "claude"
    record = tmp_path / "claude-argv.json"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, runpy, stat, sys\n"
        "argv = sys.argv[1:]\n"
        "config = argv[argv.index('--mcp-config') + 1]\n"
        "seen = {'argv': argv, 'config': config}\n"
        "if os.path.isfile(config):\n"
        "    seen['mode'] = stat.S_IMODE(os.stat(config).st_mode)\n"
        "    seen['dir_mode'] = stat.S_IMODE(os.stat(os.path.dirname(config)).st_mode)\n"
        "    seen['content'] = open(config).read()\n"
        f"open({str(record)!r}, 'w').write(json.dumps(seen))\n"
        f"runpy.run_path({str(FAKE_CLAUDE)!r}, run_name='__main__')\n"
    )
    script.chmod(0o755)
    return record


async def test_mcp_secrets_never_reach_the_agents_command_line(
    tmp_path: Path, serves: list[ServeProcess]
) -> None:
    record = _fake_claude(tmp_path)
    env = {
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_CLAUDE_BIN": str(tmp_path / "claude"),
        "FAKE_CLAUDE_MODE": "normal",
        "FAKE_CLAUDE_LOG": str(tmp_path / "launches.log"),
    }
    serve = await ServeProcess.start("--no-transcripts", env=env)
    serves.append(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    header = {"Authorization": "Bearer " + KEY}
    servers = [
        {
            "name": "db",
            "connection": {
                "Stdio": {"command": "db-mcp", "args": [], "env": {"DB_TOKEN": SESSION_SECRET}}
            },
        },
        {"name": "web", "connection": {"Http": {"url": "https://mcp.example", "headers": header}}},
    ]
    opened = await serve.ok(
        {"cmd": "open", "agent": "claude", "dir": str(tmp_path), "mcp_servers": servers}
    )
    seen = json.loads(record.read_text())
    command_line = " ".join(seen["argv"])
    assert SESSION_SECRET not in command_line and KEY not in command_line
    assert seen["mode"] == 0o600 and seen["dir_mode"] == 0o700
    config = json.loads(seen["content"])["mcpServers"]
    assert config["db"]["env"] == {"DB_TOKEN": SESSION_SECRET}
    assert config["web"]["headers"] == header
    assert _exists(seen["config"])  # the CLI may read it again while the session runs
    await serve.ok({"cmd": "close", "session": opened["id"]})
    assert not _exists(seen["config"])
    assert not _exists(os.path.dirname(seen["config"]))
    assert await serve.finish() == 0


async def test_a_failed_claude_start_leaves_no_mcp_file(
    tmp_path: Path, serves: list[ServeProcess]
) -> None:
    record = _fake_claude(tmp_path)
    env = {
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_CLAUDE_BIN": str(tmp_path / "claude"),
        "FAKE_CLAUDE_MODE": "no_handshake",
        "FAKE_CLAUDE_LOG": str(tmp_path / "launches.log"),
    }
    serve = await ServeProcess.start("--no-transcripts", env=env)
    serves.append(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    server = {"name": "db", "connection": {"Stdio": {"command": "db", "args": [], "env": {}}}}
    reply = await serve.request(
        {"cmd": "open", "agent": "claude", "dir": str(tmp_path), "mcp_servers": [server]}
    )
    assert "error" in reply
    config = json.loads(record.read_text())["config"]
    assert not _exists(os.path.dirname(config))
    assert await serve.finish() == 0


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("host", "warned"), [("0.0.0.0", True), ("127.0.0.1", False)])
async def test_metrics_off_loopback_warn_on_stderr(
    tmp_path: Path, serves: list[ServeProcess], host: str, warned: bool
) -> None:
    port = _free_port()
    serve = await ServeProcess.start(
        "--no-transcripts",
        "--metrics",
        f"{host}:{port}",
        env={"CORRAL_HOME": str(tmp_path / "home")},
    )
    serves.append(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    assert await serve.finish() == 0
    stderr = serve.stderr.decode()
    assert f"metrics on http://{host}:{port}/metrics" in stderr
    warning = f"warning: metrics are served on {host}, not only on this machine"
    assert (warning in stderr) is warned, stderr
