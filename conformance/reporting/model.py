"""The canonical report read back as a typed, immutable model.

Why: the canonical report (the JSON `canonical.ReportBuilder` writes) is the one source of every view
and report command; reading it as loose `dict[str, Any]` let each reader guess at keys and defaults on
its own. Here it is validated once against `report.schema.json` and turned into frozen dataclasses, so
a view reads `case.verdict`, `footer.totals`, `target.server_info`, and a malformed report is refused
with one clear line (`ReportError`) before any view sees it. Free-form JSON (evidence values, server
info, transcript entries, options) stays as read-only mappings: the report does not type it either.

The model never writes: `canonical` builds and writes the JSON, baselines and merges rewrite it, and
`Report.data` keeps the JSON the model was read from (read-only) for a command that copies it out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from conformance.engine.results import CaseRecord
from conformance.model import verdicts
from conformance.model.verdicts import Verdict
from conformance.reporting import canonical
from conformance.reporting.canonical import FORMAT, FORMAT_VERSION
from conformance.text import by_cause, readable

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class ReportError(ValueError):
    """The input is not a readable canonical report: one line saying where and why."""


def _ro(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only view of a JSON object (its nested values are the model's own copy)."""
    return MappingProxyType(dict(value)) if value else _EMPTY


@dataclass(frozen=True)
class Harness:
    name: str
    version: str


@dataclass(frozen=True)
class Header:
    run_id: str
    harness: Harness
    started: str
    suites: tuple[str, ...]
    #: The run's options as recorded (protocol, strict, select, the packs' own): free-form.
    options: Mapping[str, Any]
    command: tuple[str, ...] | None
    #: Every other header key (a merge's `merged_from`, a seed): free-form, read-only.
    extra: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Header:
        known = {"run_id", "harness", "started", "suites", "options", "command"}
        command = data.get("command")
        return cls(
            run_id=data["run_id"],
            harness=Harness(data["harness"]["name"], data["harness"]["version"]),
            started=data["started"],
            suites=tuple(data["suites"]),
            options=_ro(data.get("options")),
            command=tuple(command) if command is not None else None,
            extra=_ro({k: v for k, v in data.items() if k not in known}),
        )


@dataclass(frozen=True)
class Probe:
    revision: str
    spoken: bool
    message: str


@dataclass(frozen=True)
class Target:
    index: int
    spec: str
    transport: str
    url: str | None
    revisions_spoken: tuple[str, ...]
    probe: tuple[Probe, ...]
    #: What the server announced (name, version, ...), as it said it; None when it never said.
    server_info: Mapping[str, Any] | None
    timeouts: Mapping[str, Any] | None
    #: False, True, or the reason it could not be reached.
    unreachable: bool | str
    #: "server", or "client" for a client run's target (the client judged over one transport), whose
    #: `command` is the client's command line.
    side: str = "server"
    command: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Target:
        info, timeouts = data.get("server_info"), data.get("timeouts")
        return cls(
            index=data["index"],
            spec=data["spec"],
            transport=data["transport"],
            url=data.get("url"),
            revisions_spoken=tuple(data.get("revisions_spoken") or ()),
            probe=tuple(Probe(p["revision"], p["spoken"], p["message"]) for p in data.get("probe") or ()),
            server_info=_ro(info) if info is not None else None,
            timeouts=_ro(timeouts) if timeouts is not None else None,
            unreachable=data.get("unreachable") or False,
            side=data.get("side", "server"),
            command=data.get("command"),
        )

    @property
    def server_label(self) -> str:
        """`name version` as the server announced them, `?` for a nameless one."""
        info = self.server_info or _EMPTY
        return f"{info.get('name', '?')} {info.get('version', '')}".strip()

    def not_spoken(self) -> list[str]:
        """`revision: why` for every probed revision the target did not open (a timed-out probe among
        them), so no view lets a revision vanish without saying what its probe found; revisions not
        spoken for the same reason share one line (`by_cause`)."""
        return by_cause(
            (p.revision, _first_line(p.message).removeprefix("not spoken: "))
            for p in self.probe
            if not p.spoken
        )


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else "not spoken"


@dataclass(frozen=True)
class CaseBaseline:
    """The baseline entry that matched a case, its reason, and the verdict the check itself gave."""

    entry: str
    reason: str
    verdict: Verdict


@dataclass(frozen=True)
class Case(CaseRecord):
    """A case read back: the engine's one field list (`engine.results.CaseRecord`), its evidence and
    each transcript entry read-only (`transcript` a tuple), and what a baseline said of it."""

    baseline: CaseBaseline | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Case:
        mark = data.get("baseline")
        return cls(
            key=data["key"],
            check=data["check"],
            suite=data["suite"],
            requirement=data["requirement"],
            level=data["level"],
            title=data["title"],
            target=data["target"],
            transport=data["transport"],
            revision=data["revision"],
            verdict=Verdict(data["verdict"]),
            message=data["message"],
            duration=data["duration"],
            evidence=_ro(data["evidence"]),
            transcript=tuple(_ro(entry) for entry in data["transcript"]),
            baseline=CaseBaseline(mark["entry"], mark["reason"], Verdict(mark["verdict"])) if mark else None,
            blocked_by=data.get("blocked_by"),
            unscored=data.get("unscored"),
            official=tuple(data["official"]) if data.get("official") else None,
            skip=_ro(data["skip"]) if data.get("skip") else None,
            judged_at=data.get("judged_at"),
        )

    @property
    def level_shown(self) -> str:
        """The level every view shows: the row's, and the level the verdict was judged at when that
        differs (`judged_at`), so a WARN under a MUST row says why it is no FAIL."""
        return f"{self.level}; judged as {self.judged_at}" if self.judged_at else self.level

    @property
    def skip_kind(self) -> str:
        """Why a SKIP is one, in `verdicts.SKIP_KINDS`' words' key: "blocked" when another case holds
        the defect, else the kind the check gave (default "nothing-to-judge"); "" for other verdicts."""
        if self.verdict != Verdict.SKIP:
            return ""
        if self.blocked_by:
            return "blocked"
        return str((self.skip or {}).get("kind") or "nothing-to-judge")

    @property
    def gating(self) -> Verdict:
        """The verdict a gate reads (`verdicts.gate`): an unscored FAIL or ERROR gates as a WARN."""
        return verdicts.gate(self.verdict, self.unscored)

    @property
    def own_verdict(self) -> Verdict:
        """The verdict the check gave, before a baseline turned it into XFAIL or XPASS."""
        return self.baseline.verdict if self.baseline else self.verdict

    def first_line(self, width: int) -> str:
        """The message's first line, cut to `width` characters (every view's one-line summary)."""
        return self.message.splitlines()[0][:width] if self.message else ""


@dataclass(frozen=True)
class FooterBaseline:
    """The baseline applied to the run: where it came from, its digest, entries that matched no case."""

    path: str
    sha256: str
    entries: int
    unmatched: tuple[str, ...]


@dataclass(frozen=True)
class Footer:
    complete: bool
    reason: str
    finished: str | None
    #: Counts by verdict (and `cases`) as written; empty in a footer written before the run ended.
    totals: Mapping[str, int]
    #: The exit code stamped by the run (130 for Ctrl-C); None when none was.
    exit_code: int | None
    baseline: FooterBaseline | None
    #: Counts by verdict (and `cases`) of the unscored cases, which `totals` counts too; empty if none.
    unscored: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Footer:
        base = data.get("baseline")
        return cls(
            complete=data["complete"],
            reason=data["reason"],
            finished=data.get("finished"),
            totals=_ro(data.get("totals")),
            exit_code=data.get("exit_code"),
            unscored=_ro(data.get("unscored") or {}),
            baseline=(
                FooterBaseline(base["path"], base["sha256"], base["entries"], tuple(base["unmatched"]))
                if base
                else None
            ),
        )


@dataclass(frozen=True)
class Report:
    header: Header
    targets: tuple[Target, ...]
    cases: tuple[Case, ...]
    footer: Footer
    #: The JSON this model was read from (a private deep copy), for commands that pass it on whole.
    data: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Any, *, source: str = "the report") -> Report:
        """Validate `data` against `report.schema.json`, then build the model; a bad report is a
        `ReportError` with one line naming `source` and the first problems."""
        if isinstance(data, Mapping):
            # The model is of the report as written: through JSON (bytes as text with escapes, tuples
            # as arrays), which also makes it the model's own deep copy of a caller's dict.
            data = json.loads(json.dumps(data, ensure_ascii=False, default=readable))
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ReportError(f"{source} is not an mcp-conformance report")
        if data.get("format_version") != FORMAT_VERSION:
            raise ReportError(
                f"{source} has report format version {data.get('format_version')!r}; "
                f"this harness reads version {FORMAT_VERSION}"
            )
        from conformance import schemas

        problems = schemas.errors(schemas.REPORT_ID, None, data, limit=3)
        if problems:
            raise ReportError(f"{source} does not follow the report schema: {'; '.join(problems)}")
        own = dict(data)
        return cls(
            header=Header.from_json(own["header"]),
            targets=tuple(Target.from_json(t) for t in own["targets"]),
            cases=tuple(Case.from_json(c) for c in own["cases"]),
            footer=Footer.from_json(own["footer"]),
            data=MappingProxyType(own),
        )

    @property
    def unreachable(self) -> bool:
        return any(target.unreachable for target in self.targets)

    @property
    def nothing_judged(self) -> bool:
        """Every case is a SKIP: the run cannot vouch for the server (`canonical.nothing_judged`, the
        one reading of the verdict module's rule for a report)."""
        return canonical.nothing_judged(self.data)

    @property
    def exit_code(self) -> int:
        """The exit code recomputed from the cases (`canonical.exit_code`, the one reading of
        `verdicts.exit_code` for a report, which the run stamps with), never the footer's echo."""
        return canonical.exit_code(self.data)

    def counts(self) -> dict[str, int]:
        """Cases by verdict, every verdict listed, plus `cases`: the footer's totals as they should be."""
        counted = {str(v): 0 for v in verdicts.VERDICTS}
        for case in self.cases:
            counted[case.verdict] += 1
        return counted | {"cases": len(self.cases)}

    def apart(self) -> tuple[dict[str, int], dict[str, int]]:
        """(scored, unscored): the footer's totals split into the cases that can fail the run and the
        unscored ones (an unclaimed experimental feature or extension), each by verdict and `cases`.
        Every view counts the two apart; unscored is empty when there are none."""
        totals = dict(self.footer.totals) or self.counts()
        unscored = dict(self.footer.unscored)
        scored = {key: totals.get(key, 0) - unscored.get(key, 0) for key in totals}
        return scored, unscored

    def shown_verdicts(self) -> list[Verdict]:
        """The verdicts a view lists: the five of every run, plus XFAIL and XPASS when a baseline was
        applied or they occur, so a report without a baseline reads as before baselines existed."""
        extra = self.footer.baseline is not None
        totals = self.footer.totals
        return [v for v in verdicts.VERDICTS if v not in verdicts.BASELINE_VERDICTS or extra or totals.get(v)]


_UNSAFE = re.compile(r"[^A-Za-z0-9]+")


def case_anchor(key: str) -> str:
    """The fragment that names a case in report.html (`id="case-<anchor>"`), from its case key alone,
    so a page made from another report (`compare`) can link to it: a readable slug of the key (ASCII
    letters, digits and `-`, safe in an id, a URL and a CSS selector) and 10 hex digits of its sha256,
    which keep two keys that slug alike (`a.b` and `a-b`) apart."""
    slug = _UNSAFE.sub("-", key).strip("-")[:80].rstrip("-")
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}" if slug else digest


def coerce(report: Report | Mapping[str, Any], *, source: str = "the report") -> Report:
    """The model of `report`: itself when it already is one, else read (and validated) from its JSON.
    Views and commands accept either, so a caller holding the just-built dict need not convert."""
    return report if isinstance(report, Report) else Report.from_json(report, source=source)


def load(path: Path) -> Report:
    """Read a canonical report from its file, or from a report folder holding `report.json`."""
    if path.is_dir():
        path = path / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ReportError(f"{path} is not JSON: {exc}") from None
    return Report.from_json(data, source=str(path))
