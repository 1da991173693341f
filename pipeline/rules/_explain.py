"""Why a policy decided what it did: the trace behind one verdict.

An `Explanation` holds the verdict the engine gets, who decided
(`rule:<id>`, `guard:<id>`, `mode:<Mode>`, or nobody: the app), and the
trace: for each subject of the request (each command, each path, each
question), which rule decided it and which rules were passed over and why;
and for each guard that saw something, whether it applied. `render()` is
what `corral policy explain` prints; `to_wire()` is its JSON form.
"""

from __future__ import annotations

import attrs

from ..events import ChoicesAnswer, QuestionsAnswer, TextAnswer
from ..policy import Decide, Forward, Verdict
from ..records import Decider, PolicyDecider

__all__ = ["Explanation", "GuardTrace", "SubjectTrace", "outcome_of"]


@attrs.frozen(kw_only=True)
class SubjectTrace:
    subject: str  # 'command "git status"', 'path src/a.py', 'question 1 "Proceed?"'
    outcome: str  # allow, allow_always, deny, ask, answer
    decided_by: PolicyDecider | None  # a rule or the mode; None: no rule, the app answers
    skipped: tuple[tuple[str, str], ...] = ()  # (rule id, why it did not match)
    note: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "outcome": self.outcome,
            "decided_by": self.decided_by or None,
            "skipped": [{"rule": rule, "why": why} for rule, why in self.skipped],
            "note": self.note,
        }


@attrs.frozen(kw_only=True)
class GuardTrace:
    guard: str
    detail: str
    applied: bool
    why: str
    word: str | None = None  # the word of the line that the guard saw

    def to_wire(self) -> dict[str, object]:
        return {
            "guard": self.guard,
            "detail": self.detail,
            "word": self.word,
            "applied": self.applied,
            "why": self.why,
        }


def outcome_of(verdict: Verdict) -> str:
    """allow_once, allow_always, deny_once, deny_always, answered, or ask."""
    if isinstance(verdict, Forward):
        return "ask"
    answer = verdict.answer
    if isinstance(answer, QuestionsAnswer):
        return "answered"
    return {
        "AllowOnce": "allow_once",
        "AllowAlways": "allow_always",
        "DenyOnce": "deny_once",
        "DenyAlways": "deny_always",
    }[answer.choice.value]


@attrs.frozen(kw_only=True)
class Explanation:
    request: str  # one line describing the request
    verdict: Verdict
    subjects: tuple[SubjectTrace, ...] = ()
    guards: tuple[GuardTrace, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def outcome(self) -> str:
        return outcome_of(self.verdict)

    @property
    def decided_by(self) -> str:
        """Who decided: rule:/guard:/mode:, or "app" when the app will answer."""
        if isinstance(self.verdict, Decide):
            return str(self.verdict.decided_by)
        return self.verdict.reason or Decider.APP

    def render(self) -> str:
        lines = [self.request]
        for trace in self.subjects:
            who = trace.decided_by or "no rule matched: the app answers"
            lines.append(f"  {trace.subject}: {trace.outcome} ({who})")
            lines += [f"      passed over {rule}: {why}" for rule, why in trace.skipped]
            if trace.note:
                lines.append(f"      {trace.note}")
        for guard in self.guards:
            state = "applies" if guard.applied else "does not apply"
            lines.append(f"  guard {guard.guard} {state}: {guard.detail} ({guard.why})")
            if guard.word is not None and guard.word != guard.detail:
                lines.append(f"      because of {guard.word!r}")
        lines += [f"  note: {note}" for note in self.notes]
        lines.append(f"=> {self._verdict_text()}")
        return "\n".join(lines)

    def _verdict_text(self) -> str:
        verdict = self.verdict
        if isinstance(verdict, Forward):
            text = "ask the app"
            if verdict.reason:
                text += f" ({verdict.reason})"
            if verdict.deadline_seconds is not None:
                default = "the engine's default"
                if verdict.on_timeout is not None:
                    default = outcome_of(verdict.on_timeout)
                text += f"; after {verdict.deadline_seconds:g} s: {default}"
            return text
        text = f"{self.outcome} by {verdict.decided_by}"
        if isinstance(verdict.answer, QuestionsAnswer):
            text += ": " + "; ".join(_answer_text(a) for a in verdict.answer.answers)
        if verdict.message:
            text += f"\n   message to the agent: {verdict.message}"
        return text

    def to_wire(self) -> dict[str, object]:
        verdict = self.verdict
        wire: dict[str, object] = {
            "request": self.request,
            "outcome": self.outcome,
            "decided_by": self.decided_by,
            "subjects": [trace.to_wire() for trace in self.subjects],
            "guards": [guard.to_wire() for guard in self.guards],
            "notes": list(self.notes),
        }
        if isinstance(verdict, Decide):
            wire["answer"] = verdict.answer.to_wire()
            wire["message"] = verdict.message
        else:
            wire["deadline_seconds"] = verdict.deadline_seconds
            wire["on_timeout"] = (
                None if verdict.on_timeout is None else outcome_of(verdict.on_timeout)
            )
        return wire


def _answer_text(answer: ChoicesAnswer | TextAnswer) -> str:
    if isinstance(answer, ChoicesAnswer):
        return "choose " + ", ".join(answer.choices)
    return f"text {answer.text!r}"
