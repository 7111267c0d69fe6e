"""The one requirement table: every requirement ID with its level, source and quoted sentence.

Rows live as data: the core's own (`conformance/requirements.json`: the connect case of every suite) and
each installed pack's `requirements.json`, validated against `requirements.schema.json` when a pack
loads (`conformance.packs`); this module only loads and indexes them. Checks refer to rows by ID,
and `explain ID` prints a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

#: Levels whose miss is a FAIL; every other level's miss is a WARN.
FAILING_LEVELS = frozenset({"MUST", "MUST NOT", "MUST (schema)", "implied"})
#: Levels whose miss is a WARN that `--strict` turns into a FAIL: a strict run holds every SHOULD as a MUST.
STRICT_LEVELS = frozenset({"SHOULD", "SHOULD NOT"})
LEVELS = ("MUST", "MUST NOT", "MUST (schema)", "implied", "SHOULD", "SHOULD NOT", "MAY", "info")


@dataclass(frozen=True)
class Requirement:
    id: str
    suite: str
    level: str
    title: str
    quote: str
    source: str
    test: str

    @property
    def fails(self) -> bool:
        """Whether a miss of this requirement is a FAIL (MUST-like) rather than a WARN."""
        return self.level in FAILING_LEVELS

    def miss_verdict(self, strict: bool = False) -> str:
        """FAIL or WARN for a miss of this requirement; under `--strict` a missed SHOULD is a FAIL too."""
        return "FAIL" if self.fails or (strict and self.level in STRICT_LEVELS) else "WARN"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "suite": self.suite,
            "level": self.level,
            "title": self.title,
            "quote": self.quote,
            "source": self.source,
            "test": self.test,
        }


@cache
def table() -> dict[str, Requirement]:
    from conformance import packs

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
    return rows


def get(requirement_id: str) -> Requirement:
    try:
        return table()[requirement_id]
    except KeyError:
        raise KeyError(f"unknown requirement ID {requirement_id!r}") from None
