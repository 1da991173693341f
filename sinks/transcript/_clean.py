"""Large records already found clean: agents resend the same ones.

An ACP agent resends its whole session info (every slash command and its
description, every mode) with each change; its description text may hint
at a secret ("token counting") without holding one, so each copy would
be walked through whole. `KnownClean` remembers, per transcript, the
digests of the last few large payloads the redactor left unchanged.

The key is the event's payload: its encoding from `"kind":` on (the kind
and the extensions). The envelope before it (sequence, time, ids) differs
in every copy, so it is checked on its own each time. `"kind":` first
appears where the envelope puts it: an unescaped quote only ever delimits
a string, so the bytes cannot come from inside one, and no envelope field
before it holds a key of that name.
"""

from __future__ import annotations

import hashlib

from ._redact import might_need_redaction

__all__ = ["KnownClean"]

_MIN_SIZE = 1024  # smaller records cost less to check again than to remember
_REMEMBERED = 32


class KnownClean:
    MIN_SIZE = _MIN_SIZE  # a smaller record is never held

    def __init__(self) -> None:
        self._digests: dict[bytes, None] = {}  # in the order remembered

    @staticmethod
    def _digest(encoded: bytes) -> bytes | None:
        """The payload's digest when the record is large and its envelope clean, else None."""
        if len(encoded) < _MIN_SIZE:
            return None
        cut = encoded.find(b'"kind":')
        if cut < 0 or might_need_redaction(encoded[:cut]):
            return None
        return hashlib.blake2b(encoded[cut:], digest_size=16).digest()

    def holds(self, encoded: bytes) -> bool:
        """Whether this event's encoding needs no redaction, as far as is remembered."""
        digest = self._digest(encoded)
        return digest is not None and digest in self._digests

    def remember(self, encoded: bytes) -> None:
        """The redactor left this event's record unchanged."""
        digest = self._digest(encoded)
        if digest is None or digest in self._digests:
            return
        self._digests[digest] = None
        if len(self._digests) > _REMEMBERED:
            del self._digests[next(iter(self._digests))]
