"""Install pinned real agent CLIs from npm and sandbox them against a mock model.

What flows: an agent name (`AGENTS`) goes into `ensure_installed`, which
returns the executable of a pinned npm install cached under
`$CORRAL_AGENT_CACHE` (default `~/.cache/corral/test-agents`), or None with a
reason. An `AgentSandbox` (one per test) owns a fresh HOME, TMPDIR, XDG dirs
and work dir, writes each agent's config files pointing at a mock model URL,
and hands out the env and argv for the agent's interactive wire and its
one-shot mode. `require_agent` turns "not installable" into `pytest.skip`.

Invariants: installs happen under an exclusive file lock per package, so
parallel test workers install once; an install counts only once its marker
file is written (a killed install is redone); env dicts are built from
scratch (nothing of the caller's environment leaks in but PATH's node
directory), and every API key is the literal `any`.

Quirks found running these versions here (2026-11-29, Node 20, npm 11, root;
every item below was observed, not assumed):

Install
- npm: `npm install --prefix DIR pkg@ver` silently installs NOTHING ("up to
  date") when DIR's basename parses as the package itself
  (`opencode-ai@1.18.33`): each prefix gets its own `package.json` first.
- Claude Code 2.1.332 and opencode 1.18.33: the npm `bin` entry is a stub
  shell script that only their postinstall replaces. Installs here use
  `--ignore-scripts`, so the executable is the platform package's native
  binary (`@anthropic-ai/claude-code-linux-x64/claude`,
  `opencode-linux-x64/bin/opencode`). Claude's `engines` asks for Node 22;
  npm only warns on Node 20 and the native binary does not care.
- Copilot unpacks ~235 MB into `$XDG_CACHE_HOME/copilot` on first start;
  `copilot --version` is enough (under 1 s here), so `install` does it once,
  under the package lock, into `shared_xdg_cache()`.
- Cold installs (empty npm cache) took 2-6 s each, ~31 s for all seven.

Safe commands and permission
- `echo` is a known-safe command for Claude and Codex (both adapters too):
  it runs without any permission request. Use a writing command
  (`CORRAL_TOOL: touch x`) to make an agent ask. With `touch`, all five ACP
  wires (Gemini, opencode, Copilot, both adapters) send
  `session/request_permission`.
- On `session/cancel` during `CORRAL_SLOW`, all five ACP wires answer the
  prompt with `stopReason: "cancelled"` at once and drop the model HTTP
  connection (the mock's outcome turns `aborted`; codex-acp after ~1 s).

Claude Code
- `claude -p PROMPT` (text mode) offers a reduced tool set without
  `AskUserQuestion`; the stream-json wire (`wire_argv`) offers it and the
  question comes as `can_use_tool` for `AskUserQuestion`. `--allowedTools
  Bash` is enough for a one-shot tool run. Reported model: `claude-opus-5-5`.

Codex (0.171.0, and codex-acp 0.16.0)
- Shell tool `exec_command` with a `cmd` string; `apply_patch` is a
  freeform (`custom`) tool. An optional `justification` without
  `sandbox_permissions` makes the call fail, so the mock sends only required
  arguments. Tool output arrives wrapped ("Chunk ID: / Wall time: / Process
  exited with code 0 / Original token count: / Output:").
- `request_user_input` is offered but refuses ("unavailable in Default
  mode") unless `[features] default_mode_request_user_input = true`, which
  the sandbox's config.toml sets.
- No `bwrap` on PATH: Codex warns and uses its bundled bubblewrap, which
  works here, so app-server's default sandbox is read-only and it never asks.
  `codex app-server -c approval_policy="untrusted"` is refused at start
  ("no longer supported; remove this setting"), but `thread/start` params
  `{"approvalPolicy": "untrusted", "sandbox": "danger-full-access"}` make it
  send `item/commandExecution/requestApproval`. codex-acp 0.16.0 still
  takes `-c approval_policy="untrusted"`.
- The npm `codex-acp` bin is a node wrapper that spawns the native
  binary: SIGTERM to the wrapper alone left the native process running,
  orphaned. Start agents with `start_new_session=True` and signal
  the process group.
- `codex app-server` created an empty `/tmp/codex-daemon-0`, ignoring TMPDIR.
- `codex exec` prints "Reading additional input from stdin..." on stderr
  even with stdin at /dev/null; `--dangerously-bypass-approvals-and-sandbox`
  lets its one-shot tool run.

Gemini CLI
- First call: `generateContent` on `gemini-3.5-flash-lite` with a
  `responseJsonSchema` in upper-case types (`OBJECT`, `INTEGER`); its
  `complexity_score` is checked by Zod as >= 1 although the schema says no
  minimum (the mock's numbers default to 1). The main model is then chosen
  by the router (`gemini-3.1-pro-preview`, `gemini-3.8-flash`).
- `-p` offers no shell or write tool unless `--approval-mode yolo`.
- `<session_context>` comes as its own text part before the prompt; shell
  output comes wrapped in `<untrusted_context>` lines, as `Output: ...`
  then `Process Group PGID: N`.
- ACP: `authenticate {methodId: "gemini-api-key"}` answers `{}`; start to
  `initialize` answer ~1.7 s. TERM=dumb only adds warnings on stderr.

opencode
- `opencode run "a b"` sends the prompt wrapped in double quotes (the
  model sees `"CORRAL_ECHO hi"`, quotes included); the mock unwraps it. A
  title request (no tools) precedes each first turn. Shell tool `bash`
  (`command`). ACP start ~1.5 s.

Qwen Code (0.24.4)
- Talks to any OpenAI-compatible server: `OPENAI_API_KEY`, `OPENAI_BASE_URL`
  (with `/v1`) and `OPENAI_MODEL` in the environment, with
  `security.auth.selectedType: "openai"` in `~/.qwen/settings.json`; the
  mock's Chat Completions route answers it. Shell tool `run_shell_command`
  (`command`). `-p ... -o stream-json` prints Claude-like stream-json.
- Its bundled `rg` is not executable under `--ignore-scripts` (EACCES); it
  falls back to its built-in grep, with a warning on stderr.

Copilot CLI
- The prompt arrives after a `<current_datetime>...</current_datetime>` block;
  `bash` requires `description`; shell output ends with `<shellId: 0
  completed with exit code 0>`. `-p` JSON has many ephemeral events; the
  model name is masked as `******`.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

__all__ = [
    "AGENTS",
    "CODEX_ASKING_THREAD_PARAMS",
    "AgentName",
    "AgentSandbox",
    "AgentSpec",
    "InstallOutcome",
    "PermissionMode",
    "agent_cache_dir",
    "ensure_installed",
    "install",
    "locate_executable",
    "require_agent",
    "shared_xdg_cache",
]

AgentName = Literal[
    "claude", "codex", "gemini", "opencode", "copilot", "claude-acp", "codex-acp", "qwen"
]
PermissionMode = Literal["ask", "allow"]

INSTALL_TIMEOUT_S = 900.0
_MARKER = ".corral-installed"


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """One pinned agent CLI; `native` lists platform binaries that beat `bin_name`."""

    name: AgentName
    package: str
    version: str
    bin_name: str
    native: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        return f"{self.package.replace('/', '__')}@{self.version}"


AGENTS: Mapping[AgentName, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            name="claude",
            package="@anthropic-ai/claude-code",
            version="2.1.332",
            bin_name="claude",
            native=("@anthropic-ai/claude-code-{platform}/claude",),
        ),
        AgentSpec(name="codex", package="@openai/codex", version="0.171.0", bin_name="codex"),
        AgentSpec(name="gemini", package="@google/gemini-cli", version="0.61.0", bin_name="gemini"),
        AgentSpec(
            name="opencode",
            package="opencode-ai",
            version="1.18.33",
            bin_name="opencode",
            native=(
                "opencode-{platform}/bin/opencode",
                "opencode-{platform}-baseline/bin/opencode",
            ),
        ),
        AgentSpec(name="copilot", package="@github/copilot", version="1.0.102", bin_name="copilot"),
        AgentSpec(
            name="claude-acp",
            package="@zed-industries/claude-code-acp",
            version="0.16.2",
            bin_name="claude-code-acp",
        ),
        AgentSpec(
            name="codex-acp",
            package="@zed-industries/codex-acp",
            version="0.16.0",
            bin_name="codex-acp",
        ),
        AgentSpec(name="qwen", package="@qwen-code/qwen-code", version="0.24.4", bin_name="qwen"),
    )
}


# `thread/start` params that make `codex app-server` 0.171 ask before running
# a command (`-c approval_policy="untrusted"` at start is refused; see above).
CODEX_ASKING_THREAD_PARAMS: Mapping[str, str] = {
    "approvalPolicy": "untrusted",
    "sandbox": "danger-full-access",
}


@dataclass(frozen=True, kw_only=True)
class InstallOutcome:
    """`path` is the executable, or None and `reason` says why (a skip reason)."""

    agent: AgentName
    path: Path | None
    reason: str
    seconds: float
    cached: bool


def agent_cache_dir() -> Path:
    configured = os.environ.get("CORRAL_AGENT_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "corral" / "test-agents"


def _platform_names() -> list[str]:
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system(), "unknown")
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine()
    )
    names = [f"{system}-{arch}"]
    if system == "linux" and any(Path("/lib").glob("ld-musl-*")):
        names.insert(0, f"{system}-{arch}-musl")
    return names


def locate_executable(spec: AgentSpec, prefix: Path) -> Path | None:
    """The runnable file of an install: a native platform binary, else the bin link."""
    modules = prefix / "node_modules"
    for pattern in spec.native:
        for name in _platform_names():
            candidate = modules / pattern.format(platform=name)
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    link = modules / ".bin" / spec.bin_name
    return link if link.exists() else None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_OUTCOMES: dict[tuple[AgentName, Path], InstallOutcome] = {}


def install(agent: AgentName, *, cache: Path | None = None) -> InstallOutcome:
    """Install `agent` (pinned) into the cache once; later calls reuse it.

    Set `CORRAL_AGENT_NO_INSTALL=1` to use only what the cache already holds.
    """
    root = cache or agent_cache_dir()
    key = (agent, root)
    if key not in _OUTCOMES:  # a failure is remembered too: no retry per test
        spec = AGENTS[agent]
        outcome = _install_uncached(spec, root)
        if outcome.path is not None and outcome.cached and not _warm(spec, root):
            with _locked(root / f"{spec.slug}.lock"):
                _warm_up(spec, outcome.path, root)
        _OUTCOMES[key] = outcome
    return _OUTCOMES[key]


def ensure_installed(agent: AgentName, *, cache: Path | None = None) -> Path | None:
    """The executable of the pinned `agent`, installing it if needed; None if impossible."""
    return install(agent, cache=cache).path


def _install_uncached(spec: AgentSpec, root: Path) -> InstallOutcome:
    prefix = root / spec.slug
    started = time.monotonic()

    def outcome(path: Path | None, reason: str, cached: bool) -> InstallOutcome:
        seconds = time.monotonic() - started
        return InstallOutcome(
            agent=spec.name, path=path, reason=reason, seconds=seconds, cached=cached
        )

    if (found := _installed(spec, prefix)) is not None:
        return outcome(found, "", True)
    if os.environ.get("CORRAL_AGENT_NO_INSTALL") == "1":
        return outcome(None, f"{spec.name}: not in {root} and CORRAL_AGENT_NO_INSTALL=1", False)
    npm = shutil.which("npm")
    if npm is None:
        return outcome(
            None,
            f"{spec.name}: npm is not on PATH, cannot install {spec.package}@{spec.version}",
            False,
        )
    with _locked(root / f"{spec.slug}.lock"):
        if (found := _installed(spec, prefix)) is not None:  # another worker did it
            return outcome(found, "", True)
        failure = _run_npm(npm, spec, prefix)
        if failure:
            return outcome(None, failure, False)
        path = locate_executable(spec, prefix)
        if path is None:
            return outcome(None, f"{spec.name}: installed but no executable in {prefix}", False)
        _warm_up(spec, path, root)
        seconds = time.monotonic() - started
        marker = {"package": spec.package, "version": spec.version, "seconds": round(seconds, 1)}
        (prefix / _MARKER).write_text(json.dumps(marker) + "\n")
        print(
            f"[realagents] installed {spec.package}@{spec.version} in {seconds:.1f}s",
            file=sys.stderr,
            flush=True,
        )
        return outcome(path, "", False)


def shared_xdg_cache(root: Path | None = None) -> Path:
    """The XDG cache shared by sandboxes (Copilot unpacks ~235 MB there once)."""
    return (root or agent_cache_dir()) / "shared-xdg-cache"


def _warm(spec: AgentSpec, root: Path) -> bool:
    """False when the shared cache lacks what `_warm_up` puts there."""
    return spec.name != "copilot" or (shared_xdg_cache(root) / "copilot").is_dir()


def _warm_up(spec: AgentSpec, path: Path, root: Path) -> None:
    # Copilot unpacks its package into $XDG_CACHE_HOME/copilot on first start;
    # doing it here, under the install lock, keeps parallel first runs apart.
    if _warm(spec, root):
        return
    cache = shared_xdg_cache(root)
    cache.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cache),
        "XDG_CACHE_HOME": str(cache),
        "COPILOT_OFFLINE": "true",
    }
    subprocess.run(
        [str(path), "--version"],
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _installed(spec: AgentSpec, prefix: Path) -> Path | None:
    if not (prefix / _MARKER).is_file():
        return None
    return locate_executable(spec, prefix)


def _run_npm(npm: str, spec: AgentSpec, prefix: Path) -> str:
    """Run `npm install`; an empty string on success, else a skip reason."""
    pinned = f"{spec.package}@{spec.version}"
    prefix.mkdir(parents=True, exist_ok=True)
    manifest = prefix / "package.json"
    if not manifest.exists():  # see the npm quirk in the module header
        manifest.write_text(json.dumps({"name": "corral-test-agent", "private": True}) + "\n")
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--fetch-retries=1",
        "--fetch-timeout=60000",
        f"{spec.package}@{spec.version}",
    ]
    try:
        finished = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{spec.name}: npm install {pinned} timed out after {INSTALL_TIMEOUT_S:.0f}s"
    if finished.returncode != 0:
        tail = " | ".join(finished.stderr.strip().split("\n")[-3:])
        return f"{spec.name}: npm install {pinned} failed ({finished.returncode}): {tail}"
    return ""


def require_agent(agent: AgentName) -> Path:
    """The installed executable of `agent`, or `pytest.skip` with the reason."""
    outcome = install(agent)
    if outcome.path is None:
        pytest.skip(f"real agent CLI unavailable: {outcome.reason}")
    return outcome.path


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class AgentSandbox:
    """A fresh HOME, TMPDIR, XDG dirs and work dir for one agent run.

    `env(agent)` writes that agent's config files (idempotently) and returns
    a complete environment pointing it at `model_url` (the mock's base URL,
    without `/v1`). `wire_argv` is corral's interactive launch line,
    `oneshot_argv` the CLI's one-shot mode. The Copilot package cache lives
    in `shared_cache` (default: beside the agent installs) because its first
    start unpacks ~235 MB.
    """

    def __init__(
        self,
        *,
        root: Path,
        model_url: str,
        permission: PermissionMode = "ask",
        shared_cache: Path | None = None,
        claude_executable: Path | None = None,
    ) -> None:
        self.root = root
        self.model_url = model_url.rstrip("/")
        self.permission = permission
        self.shared_cache = shared_cache or shared_xdg_cache()
        self.claude_executable = claude_executable
        self.home = root / "home"
        self.tmp = root / "tmp"
        self.workdir = root / "work"
        self.xdg = {
            "XDG_CONFIG_HOME": self.home / ".config",
            "XDG_DATA_HOME": self.home / ".local" / "share",
            "XDG_STATE_HOME": self.home / ".local" / "state",
            "XDG_CACHE_HOME": self.home / ".cache",
        }
        for directory in (self.home, self.tmp, self.workdir, *self.xdg.values()):
            directory.mkdir(parents=True, exist_ok=True)

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def base_env(self) -> dict[str, str]:
        """What every agent gets: no inherited secrets, only loopback URLs."""
        node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
        path = os.pathsep.join(dict.fromkeys([node_dir, "/usr/local/bin", "/usr/bin", "/bin"]))
        env = {
            "PATH": path,
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "PWD": str(self.workdir),
            "USER": "corral",
            "LOGNAME": "corral",
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        env.update({name: str(path) for name, path in self.xdg.items()})
        return env

    def env(self, agent: AgentName) -> dict[str, str]:
        env = self.base_env()
        if agent in ("claude", "claude-acp"):
            env.update(self._claude_env(acp=agent == "claude-acp"))
        elif agent in ("codex", "codex-acp"):
            self._write_codex_config()
            env.update({"CODEX_HOME": str(self.codex_home), "MOCK_API_KEY": "any"})
        elif agent == "gemini":
            self._write_gemini_settings()
            env.update(
                {
                    "GEMINI_API_KEY": "any",
                    "GOOGLE_GEMINI_BASE_URL": self.model_url,
                    "GEMINI_CLI_TRUST_WORKSPACE": "true",
                }
            )
        elif agent == "opencode":
            self._write_opencode_config()
            env.update(
                {
                    "OPENCODE_DISABLE_AUTOUPDATE": "1",
                    "OPENCODE_DISABLE_MODELS_FETCH": "1",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                }
            )
        elif agent == "qwen":
            self._write_qwen_settings()
            env.update(
                {
                    "OPENAI_API_KEY": "any",
                    "OPENAI_BASE_URL": f"{self.model_url}/v1",
                    "OPENAI_MODEL": "mock-model",
                }
            )
        elif agent == "copilot":
            self.shared_cache.mkdir(parents=True, exist_ok=True)
            env.update(
                {
                    "COPILOT_OFFLINE": "true",
                    "COPILOT_PROVIDER_BASE_URL": f"{self.model_url}/v1",
                    "COPILOT_PROVIDER_API_KEY": "any",
                    "COPILOT_MODEL": "any",
                    "XDG_CACHE_HOME": str(self.shared_cache),
                }
            )
        return env

    def _claude_env(self, *, acp: bool) -> dict[str, str]:
        env = {
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": "any",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Claude Code defers MCP tools (the adapter's `mcp__acp__Bash`, which
            # runs through corral's terminal) behind ToolSearch; the stateless
            # mock model cannot search, so every tool is offered up front.
            "ENABLE_TOOL_SEARCH": "false",
        }
        if acp and hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # else the adapter's session/new fails as root
        if acp and self.claude_executable is not None:
            env["CLAUDE_CODE_EXECUTABLE"] = str(self.claude_executable)
        return env

    def _write_codex_config(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)  # must exist before start
        lines = [
            'model = "gpt-5.5"',
            'model_provider = "mock"',
            "",
            "[model_providers.mock]",
            'name = "mock"',
            f"base_url = {_toml_string(self.model_url + '/v1')}",
            'wire_api = "responses"',
            'env_key = "MOCK_API_KEY"',
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[features]",  # else it looks up GitHub and chatgpt.com, and exits wait ~2.5 s
            "plugins = false",
            "remote_plugin = false",
            "apps = false",
            "default_mode_request_user_input = true",
        ]
        (self.codex_home / "config.toml").write_text("\n".join(lines) + "\n")

    def _write_gemini_settings(self) -> None:
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        target = self.home / ".gemini" / "settings.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(settings, indent=2) + "\n")

    def _write_qwen_settings(self) -> None:
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False},
        }
        target = self.home / ".qwen" / "settings.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(settings, indent=2) + "\n")

    def _write_opencode_config(self) -> None:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Mock",
                    "options": {"baseURL": f"{self.model_url}/v1", "apiKey": "any"},
                    "models": {"mock-model": {"name": "Mock Model"}},
                }
            },
            "model": "mock/mock-model",
            "small_model": "mock/mock-model",
            "autoupdate": False,
            "share": "disabled",
            "permission": {"bash": self.permission, "edit": self.permission},
        }
        target = self.xdg["XDG_CONFIG_HOME"] / "opencode" / "opencode.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(config, indent=2) + "\n")

    def wire_argv(self, agent: AgentName, executable: Path) -> list[str]:
        """corral's interactive launch line for `agent`."""
        exe = str(executable)
        wires: dict[AgentName, list[str]] = {
            "claude": [
                exe,
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
                "--permission-prompt-tool",
                "stdio",
            ],
            "codex": [exe, "app-server"],
            "gemini": [exe, "--acp"],
            "opencode": [exe, "acp", "--cwd", str(self.workdir)],
            "copilot": [exe, "--acp"],
            "claude-acp": [exe],
            "codex-acp": [
                exe,
                "-c",
                'approval_policy="untrusted"',
                "-c",
                'sandbox_mode="danger-full-access"',
            ],
            "qwen": [exe, "--acp"],
        }
        return wires[agent]

    def oneshot_argv(
        self, agent: AgentName, executable: Path, prompt: str, *, allow_tools: bool = False
    ) -> list[str]:
        """The CLI's own one-shot mode (no ACP adapters: they have none)."""
        exe = str(executable)
        if agent == "claude":
            extra = ["--allowedTools", "Bash"] if allow_tools else []
            return [exe, "-p", prompt, "--output-format", "json", *extra]
        if agent == "codex":
            extra = ["--dangerously-bypass-approvals-and-sandbox"] if allow_tools else []
            return [
                exe,
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-C",
                str(self.workdir),
                *extra,
                prompt,
            ]
        if agent == "gemini":
            extra = ["--approval-mode", "yolo"] if allow_tools else []
            return [exe, "-p", prompt, "-o", "stream-json", *extra]
        if agent == "opencode":
            return [exe, "run", "--format", "json", prompt]
        if agent == "copilot":
            return [exe, "-p", prompt, "--output-format", "json", "--allow-all-tools"]
        if agent == "qwen":
            extra = ["--approval-mode", "yolo"] if allow_tools else []
            return [exe, "-p", prompt, "-o", "stream-json", *extra]
        raise ValueError(f"{agent} has no one-shot mode; drive its ACP wire")
