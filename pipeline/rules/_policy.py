"""`RulePolicy`: ordered rules, then the mode, with the guards before any allow.

In: a request and its `PolicyContext`, the moment it enters the session.
Out: a `Verdict` (`Decide` or `Forward`), and on demand the `Explanation`
behind it (`explain_request`); both come from the same evaluation.

A permission request is judged per subject (each command of a compound
shell line, each path a file tool names): the first rule that matches a
subject decides it; a subject no rule matches goes to the mode (the
policy's `mode`, else the session's), judged as `ModePolicy` does. The
request's verdict is the strictest of its subjects' (deny, then ask, then
allow), so `git status && rm -rf build` is allowed only if both commands
are. Before any allow, the guards: a hit turns the allow into the guard's
action unless the policy turned the guard off or every rule that allowed
the subjects concerned names it in `override_guards`. A guard also strips
an allowing `on_timeout` from a forwarded request. `secret-read` acts even
where nothing would be allowed: a credential file that no rule names is not
forwarded by the mode (`Ask`, `AcceptEdits`) but gets the guard's action.

A question request is judged per question by the `request = "question"`
rules; it is answered only if every question gets an answer, else
forwarded. Questions never go to the mode.

Choices follow the offer: an allow is `AllowOnce` (`AllowAlways` only when
the rule says `always` and the agent offers it); a verdict the offer cannot
express is forwarded to the app instead, with a note.
"""

from __future__ import annotations

import attrs

from ..commands import PermissionMode
from ..events import (
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionAnswer,
    QuestionRequest,
    QuestionsAnswer,
    Request,
)
from ..policy import Decide, Forward, ModePolicy, PolicyContext, Verdict
from ..records import PolicyDecider, PolicyPart
from ._answers import deny_answer, question_answer, timeout_decision
from ._explain import Explanation, GuardTrace, SubjectTrace
from ._guards import GuardHit, Guards
from ._match import Facts, mismatch, question_mismatch, request_facts
from ._model import Action, GuardAction, PolicySpec, RequestKind, Rule

__all__ = ["RulePolicy"]

_STRICTNESS = {"deny": 0, "ask": 1, "allow": 2, "allow_always": 2}


class RulePolicy:
    """A policy file, ready to decide. Stateless: one may serve many sessions."""

    def __init__(self, *, spec: PolicySpec, home: str) -> None:
        self.spec = spec
        self.home = home
        self._guards = Guards(home, writable=spec.writable)
        self._rules = {rule.id: rule for rule in spec.rules}

    def __repr__(self) -> str:
        return f"RulePolicy({self.spec.source!r}, {len(self.spec.rules)} rules)"

    def decide(self, request: Request, context: PolicyContext) -> Verdict:
        return self.explain_request(request, context).verdict

    def explain_request(self, request: Request, context: PolicyContext) -> Explanation:
        if isinstance(request, QuestionRequest):
            return self._questions(request, context)
        return self._permission(request, context)

    # ---- permissions --------------------------------------------------------------

    def _permission(self, request: PermissionRequest, context: PolicyContext) -> Explanation:
        facts = request_facts(request, context, self.home)
        mode = self.spec.mode or context.mode
        mode_allows = isinstance(
            ModePolicy().decide(request, attrs.evolve(context, mode=mode)), Decide
        )
        traces = tuple(
            self._trace(facts, index, mode, mode_allows) for index in range(len(facts.subjects))
        )
        hits = self._guards.hits(facts)
        # `unknown-command` stops a mode's allow, not a rule's: what a rule names is known.
        stopping = tuple(hit for hit in hits if _named_by_rules(hit, traces) is None)
        strictest = min(traces, key=lambda trace: _STRICTNESS[trace.outcome])
        notes: list[str] = []
        guard_traces: list[GuardTrace] = []
        if strictest.outcome == "deny":
            verdict = self._deny(request, _decider(strictest), self._rule(strictest), notes)
        elif strictest.outcome == "ask" and (secret := self._secret_for_mode(hits, traces)):
            verdict = self._guarded(request, secret, hits, notes)
        elif strictest.outcome == "ask":
            verdict = self._forward(
                request, self._rule(strictest), _decider(strictest), stopping, notes
            )
        else:
            blocking = self._blocking(hits, traces, guard_traces)
            if blocking is not None:
                verdict = self._guarded(request, blocking, stopping, notes)
            else:
                always = all(trace.outcome == "allow_always" for trace in traces)
                verdict = self._allow(request, _decider(strictest), always, notes)
        if not guard_traces:
            guard_traces = [
                _trace_of(hit, applied=False, why="nothing was allowed") for hit in hits
            ]
        return Explanation(
            request=_describe(facts),
            verdict=verdict,
            subjects=traces,
            guards=tuple(guard_traces),
            notes=tuple(notes),
        )

    def _trace(
        self, facts: Facts, index: int, mode: PermissionMode, mode_allows: bool
    ) -> SubjectTrace:
        subject = facts.subjects[index]
        skipped: list[tuple[str, str]] = []
        for rule in self.spec.rules:
            if rule.request is not RequestKind.PERMISSION:
                continue
            reason = mismatch(rule, facts, subject)
            if reason is not None:
                skipped.append((rule.id, reason))
                continue
            outcome = rule.action.value
            if rule.action is Action.ALLOW and rule.always:
                outcome = "allow_always"
            return SubjectTrace(
                subject=subject.label,
                outcome=outcome,
                decided_by=PolicyDecider(PolicyPart.RULE, rule.id),
                skipped=tuple(skipped),
            )
        return SubjectTrace(
            subject=subject.label,
            outcome="allow" if mode_allows else "ask",
            decided_by=PolicyDecider(PolicyPart.MODE, mode.value),
            skipped=tuple(skipped),
            note="no rule matched: the mode decides",
        )

    def _secret_for_mode(
        self, hits: tuple[GuardHit, ...], traces: tuple[SubjectTrace, ...]
    ) -> GuardHit | None:
        """A credential file only the mode would ask about: the guard acts, in every mode."""
        for hit in hits:
            if hit.guard != "secret-read" or self.spec.guard_action(hit.guard) is GuardAction.OFF:
                continue
            if all(_part(traces[index]) is PolicyPart.MODE for index in hit.subjects):
                return hit
        return None

    def _rule(self, trace: SubjectTrace) -> Rule | None:
        by = trace.decided_by
        return self._rules.get(by.name) if by is not None and by.part is PolicyPart.RULE else None

    def _blocking(
        self, hits: tuple[GuardHit, ...], traces: tuple[SubjectTrace, ...], out: list[GuardTrace]
    ) -> GuardHit | None:
        blocking: GuardHit | None = None
        for hit in hits:
            why = self._waiver(hit, traces)
            if why is None:
                why = "turns the allow into " + self.spec.guard_action(hit.guard).value
                blocking = blocking or hit
                out.append(_trace_of(hit, applied=True, why=why))
            else:
                out.append(_trace_of(hit, applied=False, why=why))
        return blocking

    def _waiver(self, hit: GuardHit, traces: tuple[SubjectTrace, ...]) -> str | None:
        """Why a guard hit does not stop this allow, or None if it does."""
        if self.spec.guard_action(hit.guard) is GuardAction.OFF:
            return "turned off in this policy"
        named = _named_by_rules(hit, traces)
        if named is not None:
            return named
        rules = [self._rule(traces[index]) for index in hit.subjects]
        if rules and all(rule is not None and hit.guard in rule.override_guards for rule in rules):
            names = ", ".join(sorted({f"rule:{rule.id}" for rule in rules if rule is not None}))
            return f"overridden by {names}"
        return None

    def _allow(
        self, request: PermissionRequest, decided_by: PolicyDecider, always: bool, notes: list[str]
    ) -> Verdict:
        offered = request.options
        if always and PermissionChoice.ALLOW_ALWAYS in offered:
            choice = PermissionChoice.ALLOW_ALWAYS
        elif PermissionChoice.ALLOW_ONCE in offered:
            choice = PermissionChoice.ALLOW_ONCE
        else:
            notes.append("the agent does not offer AllowOnce: the app decides")
            return Forward(reason=decided_by, deadline_seconds=self.spec.deadline)
        return Decide(answer=PermissionAnswer(choice), decided_by=decided_by)

    def _deny(
        self,
        request: PermissionRequest,
        decided_by: PolicyDecider,
        rule: Rule | None,
        notes: list[str],
    ) -> Verdict:
        message = rule.message if rule is not None and rule.message else None
        rule_name = decided_by.name
        answer = deny_answer(request, always=rule is not None and rule.always)
        if answer is None:
            notes.append("the agent offers no deny choice: the app decides")
            return Forward(reason=decided_by, deadline_seconds=self.spec.deadline)
        return Decide(
            answer=answer,
            decided_by=decided_by,
            message=message or f"denied by corral's policy (rule {rule_name})",
        )

    def _guarded(
        self,
        request: PermissionRequest,
        hit: GuardHit,
        hits: tuple[GuardHit, ...],
        notes: list[str],
    ) -> Verdict:
        decided_by = PolicyDecider(PolicyPart.GUARD, hit.guard)
        if self.spec.guard_action(hit.guard) is GuardAction.ASK:
            return self._forward(request, None, decided_by, hits, notes)
        answer = deny_answer(request, always=False)
        if answer is None:
            notes.append("the agent offers no deny choice: the app decides")
            return Forward(reason=decided_by, deadline_seconds=self.spec.deadline)
        return Decide(answer=answer, decided_by=decided_by, message=hit.message)

    def _forward(
        self,
        request: PermissionRequest,
        rule: Rule | None,
        reason: PolicyDecider,
        hits: tuple[GuardHit, ...],
        notes: list[str],
    ) -> Forward:
        deadline = self.spec.deadline
        choice = self.spec.on_timeout
        message = None
        if rule is not None:
            deadline = rule.deadline or deadline
            choice = rule.on_timeout or choice
            message = rule.message
        if deadline is None:
            return Forward(reason=reason)
        if choice is not None and choice.allows:
            waived = rule.override_guards if rule is not None else frozenset()
            stopping = [
                h.guard
                for h in hits
                if h.guard not in waived and self.spec.guard_action(h.guard) is not GuardAction.OFF
            ]
            if stopping:
                notes.append(f"guard {stopping[0]} keeps the deadline from allowing")
                choice = None
        on_timeout = None if choice is None else timeout_decision(request, choice, reason, message)
        return Forward(deadline_seconds=deadline, on_timeout=on_timeout, reason=reason)

    # ---- questions ----------------------------------------------------------------

    def _questions(self, request: QuestionRequest, context: PolicyContext) -> Explanation:
        traces: list[SubjectTrace] = []
        answers: list[QuestionAnswer] = []
        unanswered: list[Rule | None] = []  # the rule that forwarded each, if any
        for number, question in enumerate(request.questions, start=1):
            trace, answer, rule = self._question(question, number, context.agent_id)
            traces.append(trace)
            if answer is None:
                unanswered.append(rule)
            else:
                answers.append(answer)
        verdict: Verdict
        if request.questions and not unanswered:
            verdict = Decide(answer=QuestionsAnswer(tuple(answers)), decided_by=_decider(traces[0]))
        else:
            asking = unanswered[0] if unanswered else None
            deadline = (asking.deadline if asking else None) or self.spec.deadline
            reason = PolicyDecider(PolicyPart.RULE, asking.id) if asking else None
            verdict = Forward(deadline_seconds=deadline, reason=reason)
        return Explanation(
            request=f"Question from {context.agent_id}: "
            + "; ".join(repr(q.text) for q in request.questions),
            verdict=verdict,
            subjects=tuple(traces),
        )

    def _question(
        self, question: Question, number: int, agent: str
    ) -> tuple[SubjectTrace, QuestionAnswer | None, Rule | None]:
        label = f"question {number} {question.text!r}"
        skipped: list[tuple[str, str]] = []
        for rule in self.spec.rules:
            if rule.request is not RequestKind.QUESTION:
                continue
            reason = question_mismatch(rule, agent, question)
            if reason is None and rule.action is Action.ASK:
                by = PolicyDecider(PolicyPart.RULE, rule.id)
                trace = SubjectTrace(subject=label, outcome="ask", decided_by=by)
                return attrs.evolve(trace, skipped=tuple(skipped)), None, rule
            answer = question_answer(rule, question) if reason is None else reason
            if isinstance(answer, str):
                skipped.append((rule.id, answer))
                continue
            trace = SubjectTrace(
                subject=label,
                outcome="answer",
                decided_by=PolicyDecider(PolicyPart.RULE, rule.id),
                skipped=tuple(skipped),
            )
            return trace, answer, rule
        trace = SubjectTrace(subject=label, outcome="ask", decided_by=None, skipped=tuple(skipped))
        return trace, None, None


def _part(trace: SubjectTrace) -> PolicyPart | None:
    return None if trace.decided_by is None else trace.decided_by.part


def _decider(trace: SubjectTrace) -> PolicyDecider:
    """Who decided a subject a rule or the mode judged (every permission subject is)."""
    if trace.decided_by is None:
        raise AssertionError(f"{trace.subject}: no rule and no mode decided it")
    return trace.decided_by


def _trace_of(hit: GuardHit, *, applied: bool, why: str) -> GuardTrace:
    return GuardTrace(guard=hit.guard, detail=hit.detail, applied=applied, why=why, word=hit.word)


def _named_by_rules(hit: GuardHit, traces: tuple[SubjectTrace, ...]) -> str | None:
    """For `unknown-command`: why rules that name the commands make them known."""
    if hit.guard != "unknown-command":
        return None
    deciders = {str(traces[index].decided_by) for index in hit.subjects}
    if deciders and all(_part(traces[index]) is PolicyPart.RULE for index in hit.subjects):
        return f"{', '.join(sorted(deciders))} names the command"
    return None


def _describe(facts: Facts) -> str:
    what = facts.line if facts.line is not None else facts.url
    if what is None and facts.mcp is not None:
        what = f"{facts.mcp.server}/{facts.mcp.tool}"
    if what is None:
        what = ", ".join(s.path.given for s in facts.subjects if s.path is not None) or "-"
    return f"{facts.tool} from {facts.agent}: {what}"
