"""Secrets out before anything reaches disk.

`Redactor.redact(value)` walks a decoded JSON value (a record about to be
written) and returns a copy in which every secret is replaced by
`[REDACTED:<pattern>]`, plus the count of replacements per pattern. The
writer marks each record it changed (`"redacted": {...}`) and totals the
counts in the footer: redaction is never silent.

What counts as a secret:
- API keys and tokens of the common providers, recognized by their shape
  (Anthropic, OpenAI, GitHub, Google, AWS access key ids, Slack, Stripe,
  Hugging Face, GitLab, xAI, Groq, JSON web tokens);
- bearer and basic `Authorization` headers, `x-api-key` headers;
- PEM private keys (the whole block);
- values of environment variables named like secrets (`FOO_API_KEY=...`,
  `export GITHUB_TOKEN="..."`, `"AWS_SECRET_ACCESS_KEY": "..."`), and string
  values under JSON keys named like secrets (`"api_key"`, `"password"`,
  `"Authorization"`, or an env-style name in any case: `"github_token"`);
- lower-case credential-file assignments (`aws_secret_access_key = ...`
  in `~/.aws/credentials`, `openai_api_key = ...`); only `=` and only a
  few endings, since lower case is also code.

Keys are never changed, only values; numbers and booleans are left alone
(`"used_tokens": 12` is not a secret). Pure functions; safe in any thread.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import ahocorasick_rs

__all__ = ["PATTERNS", "Redaction", "Redactor", "might_hold_secret", "might_need_redaction"]

# name -> regex; the whole match is replaced, except a group named `keep`
# (a prefix such as "Bearer " or "FOO_TOKEN=") which stays readable.
_ENV_NAME = (
    r"[A-Z][A-Z0-9_]*"
    r"(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH_KEY)"
    r"[A-Z0-9_]*"
)
# Lower-case names only in `name = value` form (`~/.aws/credentials`, .ini, TOML) and only
# with these endings: lower case is also code, where `input_tokens: int` is no secret.
_LOWER_NAME = (
    r"[a-z][a-z0-9_]*_"
    r"(?:secret_access_key|secret_key|session_token|access_token|auth_token|api_key|client_secret)"
)
PATTERNS: dict[str, str] = {
    "private_key": (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    ),
    "anthropic_key": r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    "openai_key": r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    "google_api_key": r"\bAIza[0-9A-Za-z_\-]{35}",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    "stripe_key": r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
    "huggingface_token": r"\bhf_[A-Za-z0-9]{30,}",
    "gitlab_token": r"\bglpat-[A-Za-z0-9_\-]{20,}",
    "xai_key": r"\bxai-[A-Za-z0-9]{20,}",
    "groq_key": r"\bgsk_[A-Za-z0-9]{20,}",
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    "authorization_header": (
        r"(?P<keep>\b(?i:authorization|proxy-authorization)\s*[:=]\s*[\"']?"
        r"(?i:bearer|basic|token)\s+)[A-Za-z0-9._~+/\-]+=*"
    ),
    "bearer_token": r"(?P<keep>\b[Bb]earer\s+)[A-Za-z0-9._~+/\-]{16,}=*",
    "api_key_header": r"(?P<keep>\b(?i:x-api-key|x-goog-api-key|api-key)\s*:\s*)[^\s\"',;]{8,}",
    "secret_env": (
        rf"(?P<keep>(?<![A-Za-z0-9_])(?:(?:export\s+)?[\"']?{_ENV_NAME}[\"']?\s*(?:=|:)"
        rf"|{_LOWER_NAME}[ \t]*=)\s*)"
        r"(?:\"[^\"\n]+\"|'[^'\n]+'|(?![\"'$])[^\s\"',;}]+)"
    ),
}

# Each pattern above needs one of its literals (as written, or in lower case
# for the case-insensitive ones): text with none of a pattern's literals is
# not searched with that pattern, and text with none at all (most text, and
# all of it when it is long) with none. The literals are narrow on purpose:
# "sk-" alone is in "task-list", so only the patterns that can match run.
_ENV_HINTS = (
    "SECRET", "TOKEN", "PASSW", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL",
    "AUTH_KEY",
)  # fmt: skip
_LOWER_ENV_HINTS = (
    "secret_access_key", "secret_key", "session_token", "access_token", "auth_token", "api_key",
    "client_secret",
)  # fmt: skip
_PATTERN_HINTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "private_key": (("PRIVATE KEY",), ()),
    "anthropic_key": (("sk-ant-",), ()),
    "openai_key": (("sk-",), ()),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    "google_api_key": (("AIza",), ()),
    "aws_access_key_id": (("AKIA", "ASIA"), ()),
    "slack_token": (("xox",), ()),
    "stripe_key": (("k_live_", "k_test_"), ()),
    "huggingface_token": (("hf_",), ()),
    "gitlab_token": (("glpat-",), ()),
    "xai_key": (("xai-",), ()),
    "groq_key": (("gsk_",), ()),
    "jwt": (("eyJ",), ()),
    "authorization_header": ((), ("authorization",)),
    "bearer_token": ((), ("bearer",)),
    "api_key_header": ((), ("api-key",)),
    "secret_env": (_ENV_HINTS, _LOWER_ENV_HINTS),
}
_HINTS = tuple(dict.fromkeys(hint for exact, _ in _PATTERN_HINTS.values() for hint in exact))
_LOWER_HINTS = tuple(dict.fromkeys(hint for _, lower in _PATTERN_HINTS.values() for hint in lower))


def _any_in(hints: tuple[str, ...], text: str) -> bool:
    # A plain loop over `in`: faster than a generator, and than one regex of
    # alternatives (which Python's engine tries at every position).
    for hint in hints:  # noqa: SIM110
        if hint in text:
            return True
    return False


def _hinted(name: str, text: str, lowered: str) -> bool:
    exact, lower = _PATTERN_HINTS[name]
    return _any_in(exact, text) or _any_in(lower, lowered)


def _fewest(hints: set[str]) -> tuple[str, ...]:
    """The hints no other hint is part of: finding none of these finds none at all."""
    return tuple(sorted(h for h in hints if not any(o != h and o in h for o in hints)))


# Lower-case JSON keys whose string values are secrets whatever they look like.
_SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "x-api-key",
        "secret",
        "client_secret",
        "secret_key",
        "password",
        "passwd",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "bearer_token",
        "session_token",
        "private_key",
        "access_key",
        "authorization",
        "proxy-authorization",
        "cookie",
    }
)

# The prefilter looks for every hint in lower case, in lower-cased text: a
# little wider than the patterns (it cannot miss what they find, and finds a
# few more), and far fewer searches, since hints holding a shorter one go
# ("access_token" holds "token"). Every hint is plain ASCII with nothing JSON
# escapes, so a hint in a decoded string is also in its JSON encoding: no
# hint in the bytes, nothing to redact.
_FILTER = _fewest({hint.lower() for hint in (*_HINTS, *_LOWER_HINTS, *_SECRET_KEYS)})
# Every record passes the filter, so it searches for all its hints at once (Aho-Corasick):
# one `in` per hint costs ten times as much on a record of a few hundred bytes.
_TEXT_FILTER = ahocorasick_rs.AhoCorasick(_FILTER)
_BYTE_FILTER = ahocorasick_rs.BytesAhoCorasick([hint.encode() for hint in _FILTER])


def might_hold_secret(text: str) -> bool:
    return bool(_TEXT_FILTER.find_matches_as_indexes(text.lower()))


def _bytes_hinted(lowered: bytes) -> bool:
    return bool(_BYTE_FILTER.find_matches_as_indexes(lowered))


def might_need_redaction(encoded: bytes) -> bool:
    """False only when `Redactor.redact` would leave this JSON value unchanged.

    A hint that is only the name of a key `_secret_key` calls plain
    (`"resume_token":`, `"input_tokens":`) does not count: keys are never
    changed, and the values under them are still searched. An unescaped `":`
    only ever ends a key, and no hint holds `"` or `:`, so cutting such a
    name out cannot join two pieces into a new hint.
    """
    lowered = encoded.lower()
    if not _bytes_hinted(lowered):
        return False
    for plain in _PLAIN_KEY_BYTES:
        lowered = lowered.replace(plain, b'":')
    return _bytes_hinted(lowered)


_COMPILED = [(name, re.compile(regex)) for name, regex in PATTERNS.items()]
_ENV_KEY = re.compile(rf"{_ENV_NAME}\Z", re.IGNORECASE)  # a JSON key is not code: any case


def _mask(name: str) -> str:
    return f"[REDACTED:{name}]"


class Redaction:
    """What one `redact` call replaced: a count per pattern."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}  # a plain dict: one is made for every record

    def add(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def mark(self) -> dict[str, object]:
        return {"count": self.total, "patterns": sorted(self.counts)}


class Redactor:
    def __init__(self) -> None:
        assert PATTERNS.keys() == _PATTERN_HINTS.keys(), "every pattern has its literals"
        self._patterns = [(name, re.compile(regex)) for name, regex in PATTERNS.items()]

    def redact_text(self, text: str, found: Redaction) -> str:
        if len(text) <= _CLEAN_MAX and _is_clean(text):
            return text
        lowered = text.lower()
        for name, pattern in self._patterns:
            if _hinted(name, text, lowered):
                text = pattern.sub(functools.partial(_replace, name=name, found=found), text)
        return text

    def redact(self, value: Any, found: Redaction | None = None) -> tuple[Any, Redaction]:
        """A redacted copy of `value`, and what was replaced (added to `found` if given)."""
        found = found if found is not None else Redaction()
        return self._walk(value, found), found

    def _walk(self, value: Any, found: Redaction) -> Any:
        if isinstance(value, str):
            return self.redact_text(value, found)
        if isinstance(value, list):
            return [self._walk(item, found) for item in value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if isinstance(item, str) and item and _secret_key(key):
                    if not item.startswith("[REDACTED:"):
                        found.add("secret_field")
                        item = _mask("secret_field")
                    out[key] = item
                else:
                    out[key] = self._walk(item, found)
            return out
        return value


# Agents resend the same strings (the session info's commands and modes with
# every update): remembering which short strings hold nothing keeps a large,
# repeated record from being searched again each time.
_CLEAN_MAX = 4096


@functools.lru_cache(maxsize=8192)
def _is_clean(text: str) -> bool:
    """No secret pattern finds anything in `text` (cached; thread-safe)."""
    if not might_hold_secret(text):
        return True
    lowered = text.lower()
    return not any(
        _hinted(name, text, lowered) and pattern.search(text) is not None
        for name, pattern in _COMPILED
    )


# Named like secrets, and none: the id a session resumes by (a transcript
# without it cannot be resumed).
_PLAIN_KEYS = frozenset({"resume_token", "resumetoken"})
_PLAIN_KEY_BYTES = (b'"resume_token":', b'"resumetoken":', b'tokens":')


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    """Whether a string under this key is a secret whatever it says (cached: keys repeat)."""
    lowered = key.lower()
    if lowered in _SECRET_KEYS:
        return True
    if lowered in _PLAIN_KEYS or lowered.endswith("tokens"):  # `max_tokens`: a count
        return False
    return bool(_ENV_KEY.match(key))


def _replace(match: re.Match[str], *, name: str, found: Redaction) -> str:
    if "[REDACTED:" in match.group(0):
        return match.group(0)
    found.add(name)
    keep = match.groupdict().get("keep") or ""
    return keep + _mask(name)
