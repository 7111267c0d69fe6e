"""Golden vectors as linted data: each pack's `vectors/*.json`, each file declaring its schema by `$id`.

`lint` checks every file against the shared envelope and its own schema, that vector IDs are unique
across the project, and that each vector names a requirement that exists in the requirement table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any

from conformance import schemas

ENVELOPE_ID = "urn:mcp-conformance:vector-file:1"


@dataclass(frozen=True)
class VectorFile:
    name: str
    data: dict[str, Any]


def vector_files(suite: str | None = None) -> list[VectorFile]:
    from conformance.model import packs

    chosen = [packs.get(suite)] if suite else list(packs.installed().values())
    return [VectorFile(name, _load(entry)) for pack in chosen for name, entry in pack.vector_files()]


def _load(entry: Traversable) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
    return data


def load(suite: str, name: str) -> list[dict[str, Any]]:
    """The vectors of one file, e.g. load("map-review", "digests.json")."""
    from conformance.model import packs

    entry = packs.get(suite).files().joinpath("vectors", name)
    vectors: list[dict[str, Any]] = _load(entry)["vectors"]
    return vectors


def lint(suite: str | None = None) -> tuple[int, list[str]]:
    """Return (number of vectors checked, problems)."""
    from conformance.model.requirements import table

    requirements = table()
    problems: list[str] = []
    seen: dict[str, str] = {}
    count = 0
    for vf in vector_files(suite):
        for line in schemas.errors(ENVELOPE_ID, None, vf.data, limit=20):
            problems.append(f"{vf.name}{line}")
        declared = vf.data.get("$schema")
        if isinstance(declared, str) and declared != ENVELOPE_ID:
            try:
                problems += [f"{vf.name}{line}" for line in schemas.errors(declared, None, vf.data, limit=20)]
            except Exception as exc:  # an unknown $id is a lint finding, not a crash
                problems.append(f"{vf.name}: cannot use schema {declared!r}: {exc}")
        folder = vf.name.split("/", 1)[0]
        if vf.data.get("suite") != folder:
            problems.append(f"{vf.name}: suite {vf.data.get('suite')!r} does not match its folder {folder!r}")
        for vector in vf.data.get("vectors", []):
            if not isinstance(vector, dict):
                continue
            count += 1
            vid = vector.get("id")
            if isinstance(vid, str):
                if vid in seen:
                    problems.append(f"{vf.name}: vector id {vid!r} also in {seen[vid]}")
                seen[vid] = vf.name
            req = vector.get("requirement")
            if isinstance(req, str) and req not in requirements:
                problems.append(f"{vf.name}: vector {vid!r} names unknown requirement {req!r}")
    return count, problems
