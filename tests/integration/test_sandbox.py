"""corral's OS sandbox (bubblewrap): commands it runs, and agents that ask for it.

The policy here allows `touch` anywhere (it overrides the
write-outside-session guard), as a command that slipped past the guard
would be; the sandbox alone then keeps it from writing outside the
session directory. Terminal commands come from the SDK agent
(`tests/support/acp_agents/scripted.py`, its `term LINE` prompt); the
agent-process sandbox uses a small raw ACP agent opened ad hoc through a
real `corral serve`, whose every line is checked against the schema.

Where bubblewrap cannot work the sandbox tests are skipped, except under
CI (`CI` set), where they fail: `.ci/bubblewrap` installs it.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import secrets
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AcpRef
from corral.pipeline.driver import SandboxSpec
from corral.pipeline.errors import CorralError
from corral.pipeline.events import TextDelta
from corral.pipeline.rules import PolicyError, SandboxMode, parse_policy
from corral.sources._sandbox import agent_argv, command_argv, probe
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog

from tests.support.acp_agents.drive import Watcher
from tests.support.serve import ServeProcess

pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")

SCRIPTED = Path(__file__).parents[1] / "support" / "acp_agents" / "scripted.py"

POLICY = """
version = 1
mode = "Ask"
{sandbox}

[[rule]]
id = "touch-anywhere"
command = ["touch", "echo"]
action = "allow"
override_guards = ["write-outside-session", "unknown-command", "unparsed-command"]
"""

# An ACP agent that, asked `write OUTSIDE`, tries to write OUTSIDE and a file
# in its working directory, and says how each went.
WRITER = textwrap.dedent(
    r"""
    import json, os, sys

    def send(message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def attempt(path):
        try:
            with open(path, "w") as out:
                out.write("x")
            return "wrote"
        except OSError as error:
            return f"failed ({error.strerror})"

    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "writer"}})
        elif method == "session/prompt":
            outside = message["params"]["prompt"][0]["text"].split(" ", 1)[1]
            said = f"outside {attempt(outside)}, inside {attempt('inside.txt')}"
            said += f", tmp {os.environ.get('TMPDIR')}"
            send({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": "writer", "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": said}}}})
            send({"jsonrpc": "2.0", "id": ident, "result": {"stopReason": "end_turn"}})
        elif ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "result": None})
    """
)


PRIVATE_TMP = re.compile(r"/\S*corral-sandbox-[A-Za-z0-9_]+")


def exists(path: str) -> bool:
    assert "corral-sandbox-" in path
    return os.path.exists(path)


@functools.cache
def _bwrap_reason() -> str | None:
    found = probe(os.environ)
    return None if found.bwrap is not None else found.reason


def needs_bwrap() -> None:
    reason = _bwrap_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have a working bubblewrap (.ci/bubblewrap): {reason}")
        pytest.skip(reason)


def policy_file(tmp_path: Path, sandbox: str | None) -> str:
    path = tmp_path / f"policy-{sandbox or 'default'}.toml"
    line = "" if sandbox is None else f'sandbox = "{sandbox}"'
    path.write_text(POLICY.format(sandbox=line))
    return str(path)


def texts(events: list[object]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))  # type: ignore[attr-defined]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog(catalog_entries()), transcripts=False) as rt:
        yield rt


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """The session directory, and a throwaway directory outside it."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    return work, outside


async def run_command(runtime: Runtime, work: Path, policy: str, line: str) -> str:
    ref = AcpRef(name="scripted", path=sys.executable, args=(str(SCRIPTED),))
    watcher = Watcher(await runtime.open(ref, str(work), policy=policy))
    await watcher.session.prompt(f"term {line}")
    said = texts(await watcher.turn())
    await watcher.session.close()
    return said


async def test_a_command_cannot_write_outside_the_session_dir_in_the_sandbox(
    runtime: Runtime, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    needs_bwrap()
    work, outside = dirs
    target = outside / f"outside-{secrets.token_hex(4)}"
    said = await run_command(runtime, work, policy_file(tmp_path, None), f"touch {target}")
    assert said.startswith("exit 1 "), said
    assert "Read-only file system" in said
    assert not target.exists()


async def test_the_same_command_writes_outside_with_the_sandbox_off(
    runtime: Runtime, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    work, outside = dirs
    target = outside / f"outside-{secrets.token_hex(4)}"
    said = await run_command(runtime, work, policy_file(tmp_path, "off"), f"touch {target}")
    assert said.startswith("exit 0 "), said
    assert target.exists()


async def test_a_sandboxed_command_writes_in_the_session_dir_and_its_own_tmp(
    runtime: Runtime, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    needs_bwrap()
    work, _ = dirs
    line = 'touch inside.txt && touch "$TMPDIR/scratch" && echo "tmp $TMPDIR"'
    said = await run_command(runtime, work, policy_file(tmp_path, "on"), line)
    assert said.startswith("exit 0 "), said
    assert (work / "inside.txt").exists()
    assert "corral-sandbox-" in said  # a private tmp, not the machine's /tmp
    (tmp,) = PRIVATE_TMP.findall(said)
    assert not exists(tmp)  # removed with the session


async def test_sandbox_on_without_a_working_bubblewrap_refuses_to_open(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    environ = {**os.environ, "CORRAL_BWRAP_BIN": "/bin/false"}
    async with Runtime(
        catalog=Catalog(catalog_entries()), environ=environ, transcripts=False
    ) as runtime:
        ref = AcpRef(name="scripted", path=sys.executable, args=(str(SCRIPTED),))
        with pytest.raises(CorralError) as refused:
            await runtime.open(ref, str(dirs[0]), policy=policy_file(tmp_path, "on"))
        assert refused.value.kind.value == "UnsupportedFeature"
        assert "bubblewrap" in str(refused.value)
        with pytest.raises(CorralError, match="sandbox: true needs bubblewrap"):
            await runtime.open(ref, str(dirs[0]), sandbox=True)
        # auto: the session opens, its commands unsandboxed, and info says so
        session = await runtime.open(ref, str(dirs[0]), policy=policy_file(tmp_path, "auto"))
        sandbox = session.info().details.sandbox
        assert sandbox is not None
        assert (sandbox.available, sandbox.commands, sandbox.agent) == (False, False, False)
        await session.close()


def test_the_policy_sandbox_key_takes_off_on_auto_and_nothing_else() -> None:
    for value in SandboxMode:
        policy = parse_policy(f'version = 1\nsandbox = "{value.value}"\n')
        assert policy.spec.sandbox is value
    assert parse_policy("version = 1\n").spec.sandbox is SandboxMode.AUTO
    with pytest.raises(PolicyError, match="sandbox"):
        parse_policy('version = 1\nsandbox = "sometimes"\n')


# ---- through `corral serve`: what open and probe say, and a sandboxed agent ---------


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    process = await ServeProcess.start(env={"CORRAL_HOME": str(tmp_path / "home")})
    await process.wait_for(lambda line: "hello" in line, timeout=30)
    try:
        yield process
    finally:
        await process.kill()


def writer_agent(tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    return {"acp": {"name": "writer", "path": sys.executable, "args": [str(script)]}}


async def test_open_and_probe_say_whether_commands_are_sandboxed(
    serve: ServeProcess, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    needs_bwrap()
    agent = writer_agent(tmp_path)
    probed = await serve.ok({"cmd": "probe", "agent": agent})
    assert probed["sandbox"]["available"] is True
    assert probed["sandbox"]["commands"] is True
    on = await serve.ok({"cmd": "open", "agent": agent, "dir": str(dirs[0])})
    assert on["details"]["sandbox"] == {
        "tool": "bubblewrap",
        "available": True,
        "commands": True,
        "agent": False,
        "reason": on["details"]["sandbox"]["reason"],
    }
    off = await serve.ok(
        {"cmd": "open", "agent": agent, "dir": str(dirs[0]), "policy": policy_file(tmp_path, "off")}
    )
    assert off["details"]["sandbox"]["commands"] is False
    info = await serve.ok({"cmd": "info", "session": off["id"]})
    assert info["details"]["sandbox"]["commands"] is False
    assert await serve.finish() == 0


@pytest.mark.parametrize("sandboxed", [True, False])
async def test_an_agent_opened_with_sandbox_true_cannot_write_outside(
    serve: ServeProcess, dirs: tuple[Path, Path], tmp_path: Path, sandboxed: bool
) -> None:
    if sandboxed:
        needs_bwrap()
    work, outside = dirs
    target = outside / f"outside-{secrets.token_hex(4)}"
    opened = await serve.ok(
        {"cmd": "open", "agent": writer_agent(tmp_path), "dir": str(work), "sandbox": sandboxed}
    )
    assert opened["details"]["sandbox"]["agent"] is sandboxed
    session = opened["id"]
    await serve.ok({"cmd": "prompt", "session": session, "text": f"write {target}"})
    await serve.wait_event(session, "TurnEnded")
    said = "".join(
        event["kind"]["TextDelta"]["text"]
        for event in serve.events(session)
        if isinstance(event["kind"], dict) and "TextDelta" in event["kind"]
    )
    if sandboxed:
        assert said.startswith("outside failed (Read-only file system), inside wrote"), said
        assert not target.exists()
    else:
        assert said.startswith("outside wrote, inside wrote"), said
        assert target.exists()
    assert (work / "inside.txt").exists()
    assert await serve.finish() == 0
    made = PRIVATE_TMP.findall(said)  # made for the agent by corral: gone with it
    assert len(made) == (1 if sandboxed and "TMPDIR" not in os.environ else 0), said
    for tmp in made:
        assert not exists(tmp)


# ---- the argument lists, without running them ---------------------------------------


def test_a_command_is_wrapped_with_only_the_session_and_its_tmp_writable() -> None:
    spec = SandboxSpec(bwrap="/usr/bin/bwrap")
    argv = command_argv(spec, ["/bin/sh", "-c", "true"], session_dir="/w", tmp="/t", cwd="/w/sub")
    assert argv[:3] == ["/usr/bin/bwrap", "--ro-bind", "/"]
    assert ("--die-with-parent", "--new-session") in itertools.pairwise(argv)
    binds = [argv[i + 1] for i, flag in enumerate(argv) if flag == "--bind"]
    assert binds == ["/w", "/t"]
    assert argv[argv.index("--chdir") + 1] == "/w/sub"
    assert argv[argv.index("--") + 1 :] == ["/bin/sh", "-c", "true"]


def test_an_agent_keeps_its_state_folders_and_tmpdir_writable(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    (home / ".codex").mkdir(parents=True)
    env = {"HOME": str(home), "TMPDIR": str(tmp)}
    argv, made = agent_argv(SandboxSpec(bwrap="bwrap", agent=True), ["claude"], cwd="/w", env=env)
    binds = [argv[i + 1] for i, flag in enumerate(argv) if flag == "--bind"]
    assert made is None  # it named its own TMPDIR
    assert binds[0] == "/w" and str(tmp) in binds
    assert str(home / ".codex") in binds and str(home / ".claude") in binds  # made for it
    assert str(home) not in binds  # the rest of HOME stays read-only
    assert argv[-2:] == ["--", "claude"]
