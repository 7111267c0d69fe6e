"""Cases blocked by another case: the answer a case needed broke a transport rule.

Why: a server that answers a request in a form its transport forbids (a Go SDK server answers an
unknown method over HTTP with `400 text/plain`) has broken one rule, so the report holds one FAIL, on
the row that states that rule. The cases that needed that answer to judge their own rule (the
JSON-RPC error shape, say) have nothing to judge: they are SKIP, naming the case that FAILs
(`CaseResult.blocked_by`), never FAIL on a rule the server may well keep, and never ERROR, since
the harness did observe what happened.

The judging case runs last in its revision, so it sees every violation the other cases met; it
reads them from `ctx.shared[SHARED_KEY]` (`recorded`). Which check judges a transport's rule is the
pack's to say (`Pack.transport_judges`: the base pack names its HTTP check); the engine names no pack.
When that check is not part of the run (`-k`, a profile pack on its own), such a case is ERROR, naming
the rule, so a gate still does not pass.

A check can also say it is blocked itself (`checks.blocked(check_id, reason)`: the document it reads
is not served, say); `Plan.key_of` turns the check ID into the case key the report names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.adapters.base import TransportError, TransportViolation
from conformance.engine.checks import Check
from conformance.engine.context import CaseContext, Violation
from conformance.engine.results import case_key
from conformance.model import packs
from conformance.model.verdicts import Verdict

#: Where the runner keeps the violations of one (target, revision) for the judging check.
SHARED_KEY = "engine:transport-violations"


@dataclass(frozen=True)
class Plan:
    """What one revision runs, so a blocked case can name a case that is in the report."""

    index: int
    transport: str
    revision: str
    planned: frozenset[str]

    def key_of(self, check_id: str) -> str | None:
        """The case key of `check_id` in this revision, or None when the run does not include it."""
        if check_id not in self.planned:
            return None
        return case_key(check_id, self.transport, self.revision, self.index)

    @property
    def judge_key(self) -> str | None:
        judge = judge_of(self.transport)
        return self.key_of(judge[0]) if judge else None


def judge_of(transport: str) -> tuple[str, str] | None:
    """(check ID, requirement ID) of the check that judges the rule an answer to a request can break on
    `transport`, as an installed pack declares it, or None when none does."""
    return packs.transport_judges().get(transport)


def judge_last(checks: list[Check], transport: str) -> list[Check]:
    """The revision's checks with the judging check moved to the end, so it sees every violation, and
    the checks that read the whole wire log (`Check.last`, which send nothing) just before it. The
    checks that end the shared session (`Check.ends_session`) come after every other that sends
    something, and before those that read the log, which see what they left."""
    judge = judge_of(transport)
    name = judge[0] if judge else None
    return (
        [c for c in checks if c.id != name and not c.last and not c.ends_session]
        + [c for c in checks if c.id != name and not c.last and c.ends_session]
        + [c for c in checks if c.id != name and c.last]
        + [c for c in checks if c.id == name]
    )


def rests_on(ctx: CaseContext, verdict: Verdict, raised: TransportError | None) -> Violation | None:
    """The violation this case's verdict rests on: the answer it ended on broke a transport rule and
    carried nothing to judge. A PASS rests on nothing of the kind (it judged what it needed)."""
    if not ctx.violations:
        return None
    last = ctx.violations[-1]
    if isinstance(raised, TransportViolation):
        return last if last.call is None and last.why == str(raised) else None
    if verdict == Verdict.PASS or last.call is None or not ctx.calls or ctx.calls[-1] is not last.call:
        return None
    return last if last.call.reply.response is None else None


def resolve(
    ctx: CaseContext,
    verdict: Verdict,
    message: str,
    raised: TransportError | None,
    judge_key: str | None,
    evidence: dict[str, Any],
) -> tuple[Verdict, str, str | None]:
    """(verdict, message, blocked_by) of a case that is not the judging one: unchanged, unless its
    verdict rests on an answer that broke a transport rule. Then it is SKIP blocked by `judge_key`,
    or ERROR naming the rule when no case of this run judges it. `evidence` keeps what the check said
    and the offending exchange."""
    violation = rests_on(ctx, verdict, raised)
    if violation is None:
        return verdict, message, None
    evidence["unblocked"] = f"{verdict}: {message}"
    if violation.call is not None:
        evidence.update(violation.call.excerpt())
    rule = f"{violation.method} was answered in a form the transport forbids: {violation.why}"
    if judge_key is not None:
        return Verdict.SKIP, f"blocked by {judge_key}: {rule}", judge_key
    judge = judge_of(ctx.transport)
    return (
        Verdict.ERROR,
        f"could not judge: {rule} (rule {judge[1] if judge else '?'}, not judged in this run)",
        None,
    )


def record(ctx: CaseContext, key: str) -> None:
    """Keep this case's violations for the judging check of its (target, revision)."""
    if ctx.violations:
        kept: list[dict[str, Any]] = ctx.shared.setdefault(SHARED_KEY, [])
        kept.extend({"case": key, "method": v.method, "why": v.why, **_excerpt(v)} for v in ctx.violations)


def recorded(ctx: CaseContext) -> list[dict[str, Any]]:
    """The violations earlier cases of this (target, revision) met, in the order they met them."""
    kept: list[dict[str, Any]] = ctx.shared.get(SHARED_KEY, [])
    return kept


def _excerpt(violation: Violation) -> dict[str, Any]:
    if violation.call is not None:
        return {"http_status": violation.call.reply.status, "body": _body(violation)}
    return {"body": violation.excerpt[:300]}


def _body(violation: Violation) -> str:
    assert violation.call is not None
    frames = violation.call.reply.frames
    return frames[0].raw[:300].decode("utf-8", errors="replace") if frames else ""
