"""Secrets out before anything reaches disk.

`Redactor.redact(value)` walks a decoded JSON value (a record about to be
written) and returns a copy in which every secret is replaced by
`[REDACTED:<pattern>]`, plus the count of replacements per pattern. The
writer marks each record it changed (`"redacted": {...}`) and totals the
counts in the footer: redaction is never silent.

What counts as a secret (`_patterns.py` has the table):
- API keys and tokens of the common providers, recognized by their shape
  (Anthropic, OpenAI, GitHub, Google, AWS access key ids and secret keys,
  Slack, Stripe, Hugging Face, GitLab, xAI, Groq, npm, PyPI, SendGrid,
  Twilio, DigitalOcean, Azure storage keys and SAS signatures, JSON web
  tokens);
- bearer and basic `Authorization` headers, `x-api-key` headers, the
  password of a URL (`https://user:pass@host`) and of `curl -u user:pass`;
- PEM private keys (the whole block: a GCP service account's `private_key`);
- values of environment variables named like secrets (`FOO_API_KEY=...`,
  `export GITHUB_TOKEN="..."`, `"AWS_SECRET_ACCESS_KEY": "..."`), and string
  values under JSON keys named like secrets (`"api_key"`, `"password"`,
  `"token"`, `"Authorization"`, or an env-style name in any case:
  `"github_token"`, `"dbPassword"`), at any depth, and the same fields
  inside text that holds JSON;
- lower-case credential-file assignments (`aws_secret_access_key = ...`
  in `~/.aws/credentials`, `openai_api_key = ...`); only `=` and only a
  few endings, since lower case is also code;
- the session's own secrets, whatever they look like: the values of
  secret-named variables the app passed in `open`'s `env` (and in its MCP
  servers' env and headers), wherever they appear later
  (`Redactor.knowing`, `secret_values`). A value shorter than
  `MIN_KNOWN_SECRET` characters is not searched for everywhere: it would
  mask every "admin" or "1234" in the session.

Keys are never changed, only values; numbers and booleans are left alone
(`"used_tokens": 12` is not a secret). Pure functions; safe in any thread.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

import ahocorasick_rs
import orjson

from ._patterns import CASED_HINTS, ENV_NAME, PATTERN_HINTS, PATTERNS

__all__ = [
    "MIN_KNOWN_SECRET",
    "PATTERNS",
    "Redaction",
    "Redactor",
    "might_hold_secret",
    "might_need_redaction",
    "secret_values",
]

_ENV_NAME = ENV_NAME  # the names `_streams.py` imports
_PATTERN_HINTS = PATTERN_HINTS
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
        "private_key_id",
        "access_key",
        "authorization",
        "proxy-authorization",
        "cookie",
        "token",
        "passphrase",
        "credential",
        "credentials",
    }
)

# The prefilter looks for every hint in lower case, in lower-cased text: a
# little wider than the patterns (it cannot miss what they find, and finds a
# few more), and far fewer searches, since hints holding a shorter one go
# ("access_token" holds "token"). Every hint is plain ASCII with nothing JSON
# escapes, so a hint in a decoded string is also in its JSON encoding: no
# hint in the bytes, nothing to redact.
# The cased hints are looked for as written, in a second pass.
_FILTER = _fewest(
    {hint.lower() for hint in (*_HINTS, *_LOWER_HINTS, *_SECRET_KEYS) if hint not in CASED_HINTS}
)
# Every record passes the filter, so it searches for all its hints at once (Aho-Corasick):
# one `in` per hint costs ten times as much on a record of a few hundred bytes. Leftmost-
# longest matching finds a hint wherever the standard kind does (the first to start), and
# lets the automaton skip ahead with a vector prefilter: five times the bytes per second.
_SEARCH: dict[str, Any] = {
    "matchkind": ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST,
    "implementation": ahocorasick_rs.Implementation.DFA,
}
_TEXT_FILTER = ahocorasick_rs.AhoCorasick(_FILTER, **_SEARCH)
_BYTE_FILTER = ahocorasick_rs.BytesAhoCorasick([hint.encode() for hint in _FILTER], **_SEARCH)
_CASED_TEXT_FILTER = ahocorasick_rs.AhoCorasick(list(CASED_HINTS), **_SEARCH)
_CASED_BYTE_FILTER = ahocorasick_rs.BytesAhoCorasick(
    [hint.encode() for hint in CASED_HINTS], **_SEARCH
)


def might_hold_secret(text: str) -> bool:
    return bool(
        _TEXT_FILTER.find_matches_as_indexes(text.lower())
        or _CASED_TEXT_FILTER.find_matches_as_indexes(text)
    )


def _bytes_hinted(lowered: bytes) -> bool:
    return bool(_BYTE_FILTER.find_matches_as_indexes(lowered))


def might_need_redaction(encoded: bytes) -> bool:
    """False only when `Redactor.redact` would leave this JSON value unchanged.

    A hint that is only the name of a key `_secret_key` calls plain
    (`"resume_token":`, `"input_tokens":`) does not count: keys are never
    changed, and the values under them are still searched. An unescaped `":`
    only ever ends a key, and no hint holds `"`, `:` or a NUL, so blanking
    such a name out (`_blank_plain_keys`) cannot join two pieces into a new hint.
    """
    if _CASED_BYTE_FILTER.find_matches_as_indexes(encoded):
        return True
    lowered = encoded.lower()
    return _bytes_hinted(lowered) and _bytes_hinted(_blank_plain_keys(lowered))


def _blank_plain_keys(lowered: bytes) -> bytes:
    """The names of plain keys made NULs: every other byte stays where it was."""
    for plain, blank in _PLAIN_KEY_BLANKS:
        lowered = lowered.replace(plain, blank)
    return lowered


# Between the encodings `suspects` searches at once: a JSON encoding never holds a raw
# newline (in a string it is escaped, as in `_known_encoded`), nor does a hint, so
# nothing found can reach across two encodings.
_APART = b"\n"
assert not any(
    byte in hint.encode() for hint in (*_FILTER, *CASED_HINTS) for byte in (_APART, b"\0")
)

_COMPILED = [(name, re.compile(regex)) for name, regex in PATTERNS.items()]
_ENV_KEY = re.compile(rf"{_ENV_NAME}\Z", re.IGNORECASE)  # a JSON key is not code: any case


def _mask(name: str) -> str:
    return f"[REDACTED:{name}]"


class Redaction:
    """What one `redact` call replaced: a count per pattern."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}  # a plain dict: one is made for every record

    def add(self, name: str, times: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + times

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def mark(self) -> dict[str, object]:
        return {"count": self.total, "patterns": sorted(self.counts)}


MIN_KNOWN_SECRET = 6
KNOWN_SECRET = "session_secret"  # the mark of a value the session was given


def secret_values(env: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The values worth masking wherever they appear: secret-named, long enough.

    `env` is (name, value) pairs: an environment, or HTTP headers.
    """
    return tuple(
        dict.fromkeys(value for name, value in env if _secret_key(name) and _worth_knowing(value))
    )


def _worth_knowing(value: str) -> bool:
    return len(value.strip()) >= MIN_KNOWN_SECRET and "[REDACTED:" not in value


class Redactor:
    """Replaces secrets; `knowing(values)` gives one that also masks a session's own."""

    def __init__(self, *, known: Iterable[str] = ()) -> None:
        assert PATTERNS.keys() == _PATTERN_HINTS.keys(), "every pattern has its literals"
        self._patterns = [(name, re.compile(regex)) for name, regex in PATTERNS.items()]
        # Longest first: a value holding another is masked whole.
        self.known = tuple(sorted({v for v in known if _worth_knowing(v)}, key=len, reverse=True))
        self._known_encoded = tuple(orjson.dumps(value)[1:-1] for value in self.known)

    def knowing(self, values: Iterable[str]) -> Redactor:
        """A redactor that also masks these literal values (a session's own secrets)."""
        return Redactor(known=(*self.known, *values))

    def might_need_redaction(self, encoded: bytes) -> bool:
        """`might_need_redaction`, knowing this redactor's literal values too."""
        if might_need_redaction(encoded):
            return True
        for value in self._known_encoded:  # noqa: SIM110 (a plain loop is quicker)
            if value in encoded:
                return True
        return False

    def suspects(self, encoded: Sequence[bytes]) -> list[int]:
        """The indexes of the encodings `might_need_redaction` says yes of, in order.

        One search of them all, joined: most hold no hint at all, and a search
        call costs more than the bytes it reads. A hint or a known value found
        there lies inside one encoding (`_APART`), and plain keys are blanked
        in place, so where it is found says whose it is.
        """
        joined = _APART.join(encoded)
        found = [start for _, start, _ in _CASED_BYTE_FILTER.find_matches_as_indexes(joined)]
        lowered = joined.lower()
        if _bytes_hinted(lowered):
            hints = _BYTE_FILTER.find_matches_as_indexes(_blank_plain_keys(lowered))
            found += [start for _, start, _ in hints]
        for value in self._known_encoded:
            position = joined.find(value)
            while position >= 0:
                found.append(position)
                position = joined.find(value, position + 1)
        if not found:
            return []
        starts = [0, *itertools.accumulate(len(each) + 1 for each in encoded)]
        return sorted({bisect.bisect_right(starts, position) - 1 for position in found})

    def _mask_known(self, text: str, found: Redaction) -> str:
        for value in self.known:
            if value in text:
                found.add(KNOWN_SECRET, text.count(value))
                text = text.replace(value, _mask(KNOWN_SECRET))
        return text

    def redact_text(self, text: str, found: Redaction) -> str:
        if self.known:
            text = self._mask_known(text, found)
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
_PLAIN_KEY_BLANKS = tuple(
    (plain, b"\0" * (len(plain) - 2) + b'":')
    for plain in (b'"resume_token":', b'"resumetoken":', b'tokens":')
)


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
