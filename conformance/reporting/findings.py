"""Findings: the cases that did not pass, grouped by defect.

Why: a server that answers one request wrongly does so in every revision and on every transport it
speaks, so a report of one defect lists it once per revision (24 WARNs of mcp-server-time are 5 or 6
behaviours). A reader, a code-scanning alert and a terminal summary want the defect once, with where it
was seen. A finding is one requirement broken the same way: the same requirement, the same verdict,
the same message once the words that only say *which* revision or session produced it are normalized
(`normalize`). The grouping is a pure function of the cases (`findings`), so every view (HTML,
terminal, SARIF) groups alike; a finding's `fingerprint` names it apart from the revisions it was seen
in, so the same defect keeps its identity across runs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from conformance.model.verdicts import WORST_FIRST, Verdict
from conformance.reporting.model import Case

#: The verdicts that make a finding, worst first: a defect (FAIL, ERROR, XPASS), a missed SHOULD or weak
#: evidence (WARN), a known defect a baseline excuses (XFAIL). PASS and SKIP judged no defect: a SKIP
#: blocked by a finding's case is listed under that finding (`Finding.blocks`) instead.
FINDING_VERDICTS: tuple[Verdict, ...] = tuple(v for v in WORST_FIRST if v not in (Verdict.PASS, Verdict.SKIP))

#: The request each protocol era sends after a probe to settle it (`protocol.session.SENTINEL_METHODS`:
#: `ping` for the legacy handshake, `server/discover` for 2026-07-28): a message naming it names the
#: revision, not the behaviour. Written here (the reporting room does not import the session);
#: tests/reporting/test_findings.py holds the two to the same methods.
ERA_METHODS: tuple[str, ...] = ("ping", "server/discover")
ERA_PLACEHOLDER = "<ping|server/discover>"
REVISION_PLACEHOLDER = "<revision>"
ID_PLACEHOLDER = "<id>"

_ERA = re.compile(r"(?<![\w/.-])(?:" + "|".join(re.escape(m) for m in ERA_METHODS) + r")(?![\w/-])")
#: A JSON-RPC request id the harness chose, quoted in a message (`"id":13`): numbered per session, so
#: it differs between revisions for the same line sent.
_REQUEST_ID = re.compile(r'("id"\s*:\s*)-?\d+')


def normalize(message: str, revision: str) -> str:
    """`message` with the words that only say which revision or session produced it replaced: the
    case's own `revision` (another revision it names, as in "the code 2026-07-28 adopted", stays), the
    era's settling request (`ERA_METHODS`) and a quoted JSON-RPC request id. Two cases of one
    requirement whose messages normalize alike report one behaviour."""
    text = message.replace(revision, REVISION_PLACEHOLDER) if revision else message
    text = _ERA.sub(ERA_PLACEHOLDER, text)
    return _REQUEST_ID.sub(lambda m: m.group(1) + ID_PLACEHOLDER, text)


@dataclass(frozen=True)
class Finding:
    """One requirement broken the same way, and every case that showed it.

    `message` is the cases' message when they all say the same, else the normalized one (placeholders
    such as `<revision>` stand for what differs); `signature` is the normalized message the grouping
    compares. `revisions`, `transports`, `targets` and `keys` are in report order, each once."""

    requirement: str
    verdict: Verdict
    #: The level every view shows (`Case.level_shown`): the row's, and the level judged at where it
    #: differs; the distinct values joined with " / " when the cases were judged at different levels.
    level_shown: str
    title: str
    message: str
    signature: str
    revisions: tuple[str, ...]
    transports: tuple[str, ...]
    targets: tuple[int, ...]
    keys: tuple[str, ...]
    #: Why its cases are not scored (`Case.unscored`: an unclaimed experimental feature or extension).
    unscored: str | None = None
    #: The keys of the SKIPs blocked by one of its cases (`blocked_by`): one defect, one verdict.
    blocks: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """A stable name of the defect, apart from where it was seen: sha256 of the requirement, the
        verdict and the normalized message (16 hex digits), the same in every run that shows it."""
        text = "\x1f".join((self.requirement, self.verdict, self.signature))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @property
    def where(self) -> str:
        """`5 revisions (2026-07-28, ..., 2024-11-05), stdio`: where it was seen, in words."""
        count = len(self.revisions)
        revisions = f"{count} revision{'' if count == 1 else 's'} ({', '.join(self.revisions)})"
        return f"{revisions}, {', '.join(self.transports)}"


def _unique(values: Iterable[str | int]) -> tuple[str | int, ...]:
    return tuple(dict.fromkeys(values))


def _finding(cases: list[Case], signature: str, blocks: tuple[str, ...]) -> Finding:
    first = cases[0]
    messages = {case.message for case in cases}
    levels = [str(v) for v in _unique(c.level_shown for c in cases)]
    return Finding(
        requirement=first.requirement,
        verdict=first.verdict,
        level_shown=" / ".join(levels),
        title=first.title,
        message=first.message if len(messages) == 1 else signature,
        signature=signature,
        revisions=tuple(str(r) for r in _unique(c.revision for c in cases)),
        transports=tuple(str(t) for t in _unique(c.transport for c in cases)),
        targets=tuple(int(t) for t in _unique(c.target for c in cases)),
        keys=tuple(c.key for c in cases),
        unscored=first.unscored,
        blocks=blocks,
    )


def findings(cases: Iterable[Case], verdicts: Collection[Verdict] = FINDING_VERDICTS) -> list[Finding]:
    """The cases whose verdict is in `verdicts`, grouped into findings by (requirement, verdict,
    normalized message, scored or not), worst verdict first (`WORST_FIRST`), then by requirement ID,
    then in report order. Pure: the same cases give the same findings, in the same order."""
    every = list(cases)
    groups: dict[tuple[str, Verdict, str, str], list[Case]] = {}
    for case in every:
        if case.verdict not in verdicts:
            continue
        signature = normalize(case.message, case.revision)
        key = (case.requirement, case.verdict, signature, case.unscored or "")
        groups.setdefault(key, []).append(case)
    blocked: dict[str, list[str]] = {}
    for case in every:
        if case.verdict == Verdict.SKIP and case.blocked_by:
            blocked.setdefault(case.blocked_by, []).append(case.key)
    rank = {verdict: number for number, verdict in enumerate(WORST_FIRST)}
    ordered = sorted(
        enumerate(groups.items()), key=lambda item: (rank[item[1][0][1]], item[1][0][0], item[0])
    )
    out = []
    for _, ((_req, _verdict, signature, _unscored), members) in ordered:
        blocks = tuple(key for case in members for key in blocked.get(case.key, ()))
        out.append(_finding(members, signature, blocks))
    return out
