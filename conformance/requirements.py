"""The one requirement table: every requirement ID with its level, source and quoted sentence.

Rows live as data: the core's own (`conformance/requirements.json`: the connect case of every suite) and
each installed pack's `requirements.json`, validated against `requirements.schema.json` when a pack
loads (`conformance.packs`); this module only loads and indexes them. Checks refer to rows by ID,
and `explain ID` prints a row.
What a miss at a row's level is (FAIL, WARN, under `--strict`) is a verdict rule:
`conformance.verdicts.miss_verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Requirement:
    id: str
    suite: str
    level: str
    title: str
    quote: str
    source: str
    test: str

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
