"""The error kinds of the line protocol, as one exception family.

Every failure the app can see is a `CorralError` with a `kind` from the
closed set of the schema's `ErrorBody.kind`, a human `message`, and the
variant's own fields (`status`, `stderr`, `searched`...). They are turned
into wire JSON in exactly one place: `CorralError.body()`, through the
`ErrorBody` value, which is also how a client reads an `error` back
(`ErrorBody.from_wire`, exact both ways: the extra fields ride verbatim).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .events import Fields

__all__ = ["AgentGone", "CorralError", "ErrorBody", "ErrorKind"]


class ErrorKind(enum.StrEnum):
    NOT_INSTALLED = "NotInstalled"
    AUTH_REQUIRED = "AuthRequired"
    HANDSHAKE_TIMEOUT = "HandshakeTimeout"
    UNSUPPORTED_FEATURE = "UnsupportedFeature"
    INVALID_CONFIGURATION = "InvalidConfiguration"
    INVALID_REQUEST = "InvalidRequest"
    RESUME_FAILED = "ResumeFailed"
    SESSION_BUSY = "SessionBusy"
    PROTOCOL_FAILED = "ProtocolFailed"
    PROCESS_EXITED = "ProcessExited"
    SESSION_CLOSED = "SessionClosed"
    BAD_FRAME = "BadFrame"
    UNKNOWN_SESSION = "UnknownSession"
    CONSUMER_LAGGED = "ConsumerLagged"


_KINDS = {kind.value: kind for kind in ErrorKind}


@attrs.frozen(kw_only=True)
class ErrorBody:
    """The `error` object of the wire: kind, message, the variant's extra fields."""

    kind: ErrorKind
    message: str
    # JSON values beside kind and message (`status`, `stderr`...), verbatim.
    extra: dict[str, Any] = attrs.field(factory=dict)

    def to_wire(self) -> dict[str, object]:
        return {"kind": self.kind.value, "message": self.message, **self.extra}

    @classmethod
    def from_wire(cls, raw: object, path: str = "error") -> ErrorBody:
        fields = Fields(raw, path)
        return cls(
            kind=fields.choice("kind", _KINDS),
            message=fields.string("message"),
            extra={k: v for k, v in fields.raw.items() if k not in ("kind", "message")},
        )


class CorralError(Exception):
    """A failure reported to the app: kind, message and extra fields."""

    def __init__(self, kind: ErrorKind, message: str, **fields: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.fields: Mapping[str, object] = fields

    def error_body(self) -> ErrorBody:
        return ErrorBody(kind=self.kind, message=self.message, extra=dict(self.fields))

    def body(self) -> dict[str, object]:
        return self.error_body().to_wire()

    def __repr__(self) -> str:
        return f"CorralError({self.kind.value}, {self.message!r})"

    def __reduce__(self) -> tuple[object, tuple[ErrorBody]]:
        # Pickled as its body (a session's error crossing to a Ray host and back);
        # the default would call `__init__` with the message alone.
        return CorralError.from_error_body, (self.error_body(),)

    @classmethod
    def from_error_body(cls, body: ErrorBody) -> CorralError:
        return cls(body.kind, body.message, **body.extra)

    @classmethod
    def from_body(cls, body: Mapping[str, object]) -> CorralError:
        extra = {k: v for k, v in body.items() if k not in ("kind", "message")}
        return cls(ErrorKind(str(body["kind"])), str(body.get("message", "")), **extra)


class AgentGone(Exception):
    """The agent can no longer be written to: it exited or closed its input.

    Not an app-facing error: the driver's `run` reports the exit itself
    (`AgentExited`), so a command that finds the agent gone is dropped.
    """
