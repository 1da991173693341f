"""`$CORRAL_HOME/config.toml`: the defaults `corral serve` takes.

    [serve]
    transcripts = "~/corral/transcripts"   # where transcripts go
    fsync = "turn"                         # always | turn | never
    metrics = "127.0.0.1:9464"             # serve Prometheus metrics here
    policy = "preset:Cautious"             # a policy file or preset:<Name>
    handshake_timeout = 30                 # seconds an agent may take to start

Precedence: a command-line flag overrides the file, the file overrides the
built-in defaults. The file is read only by the commands that use it, so a
broken file never stops `corral --help`. Every problem — not TOML, an
unknown key, a value of the wrong kind — is a `UsageError` naming the file
and the key. The result is plain argparse defaults (`ServeDefaults.as_defaults`),
which the `serve` parser takes with `set_defaults` before parsing: that is
what makes a flag win over the file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ._cli_errors import UsageError

__all__ = ["CONFIG_HELP", "ServeDefaults", "config_path", "load_serve_defaults"]

CONFIG_HELP = """config file: $CORRAL_HOME/config.toml (if present), a [serve] table with
  transcripts = "DIR", fsync = "always|turn|never",
  metrics = "HOST:PORT", policy = "FILE or preset:<Name>", handshake_timeout = SECONDS;
  flags override the file, the file overrides the built-in defaults"""

_FSYNC = ("always", "turn", "never")


def corral_home(environ: Mapping[str, str]) -> Path:
    """`$CORRAL_HOME`, by default `$XDG_DATA_HOME/corral` (i.e. ~/.local/share/corral)."""
    home = environ.get("CORRAL_HOME")
    if home:
        return Path(home).expanduser()
    data = environ.get("XDG_DATA_HOME") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".local", "share"
    )
    return Path(data).expanduser() / "corral"


def config_path(environ: Mapping[str, str]) -> Path:
    return corral_home(environ) / "config.toml"


@attrs.frozen(kw_only=True)
class ServeDefaults:
    """What the file sets; None: the file does not say (the built-in default stands)."""

    transcripts: str | None = None
    fsync: str | None = None
    metrics: str | None = None
    policy: str | None = None
    handshake_timeout: float | None = None

    def as_defaults(self) -> dict[str, Any]:
        """argparse destinations → values, only for what the file sets."""
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}


def load_serve_defaults(environ: Mapping[str, str]) -> ServeDefaults:
    """The `[serve]` table of the config file; no file: no defaults."""
    path = config_path(environ)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ServeDefaults()
    except NotADirectoryError:  # CORRAL_HOME is a file: its own, clearer error comes later
        return ServeDefaults()
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: not a TOML file: {error}") from None
    unknown = sorted(set(table) - {"serve"})
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r} (expected a [serve] table)")
    serve = table.get("serve", {})
    if not isinstance(serve, dict):
        raise UsageError(f"{path}: 'serve' must be a table ([serve])")
    return _serve_defaults(path, serve)


def _serve_defaults(path: Path, table: dict[str, Any]) -> ServeDefaults:
    def fail(key: str, expected: str) -> UsageError:
        return UsageError(f"{path}: serve.{key} must be {expected}, not {table[key]!r}")

    values: dict[str, Any] = {}
    for key, value in table.items():
        match key, value:
            case "fsync", str() if value in _FSYNC:
                values["fsync"] = value
            case "transcripts" | "metrics" | "policy", str() if value:
                values[key] = value
            case "handshake_timeout", int() | float() if not isinstance(value, bool) and value > 0:
                values[key] = float(value)
            case "transcripts" | "metrics" | "policy", _:
                raise fail(
                    key, "a non-empty string" + (" or false" if key == "transcripts" else "")
                )
            case "fsync", _:
                raise fail(key, " or ".join(repr(choice) for choice in _FSYNC))
            case "handshake_timeout", _:
                raise fail(key, "a number of seconds above 0")
            case _:
                known = "transcripts, fsync, metrics, policy, handshake_timeout"
                raise UsageError(f"{path}: unknown key serve.{key} (known: {known})")
    return ServeDefaults(**values)
