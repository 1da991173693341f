"""What the session says about itself, and the replies the agent owes it.

The facts `info` reports (details, live options, resume token, title)
change when the agent says so (`InfoChanged`) or confirms a `configure`.
A `configure` or a `rollback` is answered later, when the agent's verdict
arrives; each waits here as a `Pending` until then, and fails with the
session's error if the session ends first. The engine emits the
`SessionUpdated` event when these methods return True.
"""

from __future__ import annotations

import attrs

from ...pipeline.commands import RollbackScope
from ...pipeline.driver import Configure, Handshake, InfoChanged, Rollback
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    Capability,
    ConfigValue,
    SessionInfo,
    SessionStatus,
)
from ._output import Output
from ._state import Pending

__all__ = ["Facts"]


class Facts:
    def __init__(self, *, session_id: str, agent: AgentInstallation, handshake: Handshake) -> None:
        self.session_id = session_id
        self.agent = agent
        self.details = handshake.details
        self.resume_token = handshake.resume_token
        self.title = handshake.title
        self.options: dict[str, ConfigValue] = dict(handshake.options)
        self.pending_config: dict[str, list[Pending]] = {}
        self.pending_rollback: Pending | None = None

    def info(self, status: SessionStatus) -> SessionInfo:
        return SessionInfo(
            id=self.session_id,
            agent=self.agent,
            details=self.details,
            options=tuple(self.options.items()),
            resume_token=self.resume_token,
            title=self.title,
            status=status,
        )

    def require(self, feature: Capability, what: str) -> None:
        if feature not in self.details.capabilities:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"{self.agent.name} does not support {what}",
                feature=feature.value,
            )

    # ---- configure -------------------------------------------------------------

    def configure(self, option: str, value: ConfigValue, output: Output) -> Pending:
        offered = {o.id: o for o in self.details.config_options}
        known = offered.get(option)
        if known is None:
            names = ", ".join(offered) or "none"
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{self.agent.name} has no option {option!r} (options: {names})",
            )
        if not known.live:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION, f"{option} cannot change in a live session"
            )
        if not known.accepts(value):
            allowed = (
                "true or false" if known.boolean else ", ".join(c.value for c in known.choices)
            )
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{value!r} is not a valid value for {option} (allowed: {allowed})",
            )
        reply = Pending()
        self.pending_config.setdefault(option, []).append(reply)
        output.command(Configure(option=option, value=value))
        return reply

    def _reply_for(self, option: str) -> Pending | None:
        replies = self.pending_config.get(option, [])
        reply = replies.pop(0) if replies else None
        if not replies:
            self.pending_config.pop(option, None)
        return reply

    def applied(self, option: str, value: ConfigValue) -> Pending | None:
        """The agent applied `option`; returns the reply waiting for it, if any."""
        self.options[option] = value
        return self._reply_for(option)

    def refused(self, option: str, reason: str) -> None:
        reply = self._reply_for(option)
        if reply is not None:
            reply.fail(
                CorralError(
                    ErrorKind.INVALID_CONFIGURATION, f"{self.agent.name} refused {option}: {reason}"
                )
            )

    # ---- rollback --------------------------------------------------------------

    def check_rollback(self, scope: RollbackScope) -> None:
        self.require(Capability.ROLLBACK, "rollback")
        if scope is RollbackScope.CONVERSATION_AND_FILES:
            self.require(Capability.ROLLBACK_FILES, "rolling back files")
        if self.pending_rollback is not None:
            raise CorralError(ErrorKind.SESSION_BUSY, "a rollback is already pending")

    def rollback(self, turns: int, scope: RollbackScope, output: Output) -> Pending:
        self.pending_rollback = Pending()
        output.command(Rollback(turns=turns, scope=scope))
        return self.pending_rollback

    def on_rollback(self, accepted: bool, reason: str | None) -> None:
        reply, self.pending_rollback = self.pending_rollback, None
        if reply is None:
            return
        if accepted:
            reply.resolve(None)
        else:
            reply.fail(
                CorralError(
                    ErrorKind.INVALID_REQUEST,
                    f"{self.agent.name} refused the rollback: {reason or 'no reason given'}",
                )
            )

    # ---- the agent's word and the end ------------------------------------------

    def on_info(self, change: InfoChanged) -> None:
        if change.resume_token is not None:
            self.resume_token = change.resume_token
        if change.title is not None:
            self.title = change.title
        if change.config_options is not None:
            self.details = attrs.evolve(self.details, config_options=change.config_options)
        if change.commands is not None:
            self.details = attrs.evolve(self.details, commands=change.commands)

    def fail_pending(self, error: CorralError) -> None:
        for replies in self.pending_config.values():
            for reply in replies:
                reply.fail(error)
        self.pending_config.clear()
        if self.pending_rollback is not None:
            self.pending_rollback.fail(error)
            self.pending_rollback = None
