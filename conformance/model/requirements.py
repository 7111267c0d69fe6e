"""The one requirement table: every requirement ID with its level, source and quoted sentence.

Rows live as data: the core's own (`conformance/requirements.json`: the connect case of every suite) and
each installed pack's `requirements.json`, validated against `requirements.schema.json` when a pack
loads (`conformance.model.packs`); this module only loads and indexes them. Checks refer to rows by ID,
and `explain ID` prints a row.
What a miss at a row's level is (FAIL, WARN, under `--strict`) is a verdict rule:
`conformance.model.verdicts.miss_verdict`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

#: A row's track: the feature it judges is stable (the default), experimental in its revision, or
#: a protocol extension. Only a stable row's cases fail a run unclaimed (`conformance.model.verdicts.scored`).
Track = Literal["stable", "experimental", "extension"]


@dataclass(frozen=True)
class Requirement:
    """One row. `level`, `quote`, `source` and `track` are the row's own; a revision whose text says
    otherwise names its values in `by_revision`, and `at(revision)` is the row as that revision reads
    (a sentence can be SHOULD in one revision and MUST in the next)."""

    id: str
    suite: str
    level: str
    title: str
    quote: str
    source: str
    test: str
    track: Track = "stable"
    by_revision: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)
    #: The official suite's checks judging the same sentence (`{"checks": [...]}`,
    #: `conformance.model.official`).
    official: Mapping[str, Sequence[str]] = field(default_factory=dict, compare=False)

    @property
    def official_checks(self) -> tuple[str, ...]:
        """The official check IDs of the row (empty: no official check judges its sentence)."""
        return tuple(self.official.get("checks", ()))

    def at(self, revision: str | None) -> Requirement:
        """The row as `revision` reads it: its own level, quote, source and track where it names
        them, the row's elsewhere (and for a case of no revision, `any`)."""
        own = self.by_revision.get(revision or "")
        if not own:
            return self
        return replace(self, by_revision={}, **own)  # type: ignore[arg-type]

    def levels(self, revisions: Iterable[str]) -> dict[str, str]:
        """The level each of `revisions` gives the row (`list` and `explain` show them)."""
        return {revision: self.at(revision).level for revision in revisions}

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "suite": self.suite,
            "level": self.level,
            "title": self.title,
            "quote": self.quote,
            "source": self.source,
            "test": self.test,
        }
        if self.track != "stable":
            data["track"] = self.track
        if self.by_revision:
            data["by_revision"] = {rev: dict(values) for rev, values in self.by_revision.items()}
        if self.official_checks:
            data["official"] = {"checks": list(self.official_checks)}
        return data


@cache
def table() -> dict[str, Requirement]:
    from conformance.model import official, packs

    sources = [("core", packs.core_requirement_rows())]
    sources += [(name, pack.requirement_rows()) for name, pack in packs.installed().items()]
    rows: dict[str, Requirement] = {}
    for suite, data in sources:
        for row in data:
            if row["id"] in rows:
                owner = rows[row["id"]].suite
                raise packs.PackError(
                    f"suite {suite!r}: requirement {row['id']} is already defined by {owner!r}"
                )
            rows[row["id"]] = Requirement(suite=suite, **row)
    try:  # a row's official checks must be checks of the pinned release, and not listed as unjudged
        official.check_rows(rows.values())
    except official.OfficialError as exc:
        raise packs.PackError(str(exc)) from None
    return rows


def get(requirement_id: str) -> Requirement:
    try:
        return table()[requirement_id]
    except KeyError:
        raise KeyError(f"unknown requirement ID {requirement_id!r}") from None
