"""Large records already found clean: agents resend the same ones.

An ACP agent resends its whole session info (every slash command and its
description, every mode) with each change; its description text may hint
at a secret ("token counting") without holding one, so each copy would
be walked through whole. `KnownClean` remembers, per transcript, the
last few large payloads the redactor left unchanged, themselves (a dict
of bytes: finding one costs a hash and a compare, a fifth of a digest),
within a byte budget.

The key is the event's payload: its encoding from `"kind":` on (the kind
and the extensions). The envelope before it (sequence, time, ids) differs
in every copy, so it is checked on its own each time. `"kind":` first
appears where the envelope puts it: an unescaped quote only ever delimits
a string, so the bytes cannot come from inside one, and no envelope field
before it holds a key of that name.
"""

from __future__ import annotations

from ._redact import might_need_redaction

__all__ = ["KnownClean"]

_MIN_SIZE = 1024  # smaller records cost less to check again than to remember
_REMEMBERED = 32
_BUDGET = 64 * 1024  # bytes remembered at most, per transcript


class KnownClean:
    MIN_SIZE = _MIN_SIZE  # a smaller record is never held

    def __init__(self) -> None:
        self._payloads: dict[bytes, None] = {}  # in the order remembered
        self._size = 0

    @staticmethod
    def _payload(encoded: bytes) -> bytes | None:
        """The payload when the record is large and its envelope clean, else None."""
        if len(encoded) < _MIN_SIZE:
            return None
        cut = encoded.find(b'"kind":')
        if cut < 0 or might_need_redaction(encoded[:cut]):
            return None
        return encoded[cut:]

    def holds(self, encoded: bytes) -> bool:
        """Whether this event's encoding needs no redaction, as far as is remembered."""
        payload = self._payload(encoded)
        return payload is not None and payload in self._payloads

    def remember(self, encoded: bytes) -> None:
        """The redactor left this event's record unchanged."""
        payload = self._payload(encoded)
        if payload is None or payload in self._payloads or len(payload) > _BUDGET:
            return
        self._payloads[payload] = None
        self._size += len(payload)
        while len(self._payloads) > _REMEMBERED or self._size > _BUDGET:
            oldest = next(iter(self._payloads))
            del self._payloads[oldest]
            self._size -= len(oldest)
