"""The one requirement table: every requirement ID with its level, source and quoted sentence.

Rows live as data in `suites/<suite>/requirements.json` (validated by `requirements.schema.json`);
this module only loads and indexes them. Checks refer to rows by ID, and `explain ID` prints a row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
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
    from conformance.catalog import SUITES

    rows: dict[str, Requirement] = {}
    for suite, entry in SUITES.items():
        path = resources.files(entry.module).joinpath("requirements.json")
        data = json.loads(path.read_text(encoding="utf-8"))
        for row in data["requirements"]:
            if row["id"] in rows:
                raise ValueError(f"requirement {row['id']} is defined twice")
            rows[row["id"]] = Requirement(suite=suite, **row)
    return rows


def get(requirement_id: str) -> Requirement:
    try:
        return table()[requirement_id]
    except KeyError:
        raise KeyError(f"unknown requirement ID {requirement_id!r}") from None
