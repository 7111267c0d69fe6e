"""The JSON Schemas of the core and of every installed pack, served from one offline `referencing.Registry`.

The core's own (MCP result shapes, the report format, the requirement table, the vector envelope, the
fixture controller) sit beside this module; each pack brings its profile's and its vectors' schemas in
its `schemas/` folder. Every one is a resource here, found by its `$id`; nothing is ever fetched from
the network, and two files claiming one `$id` are refused.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.schemas.compiled import FastValidator

SHAPES_ID = "urn:mcp-conformance:mcp-shapes:1"
REPORT_ID = "urn:mcp-conformance:report:1"
REQUIREMENTS_ID = "urn:mcp-conformance:requirements:1"
TARGET_FILE_ID = "urn:mcp-conformance:target-file:1"


def core_schema_files() -> list[Traversable]:
    return sorted(
        (e for e in resources.files(__name__).iterdir() if e.name.endswith(".schema.json")),
        key=lambda e: e.name,
    )


@cache
def registry() -> Registry:
    from conformance.model import packs

    files = [("core", entry) for entry in core_schema_files()]
    files += [(name, entry) for name, pack in packs.installed().items() for entry in pack.schema_files()]
    items: dict[str, Resource[Any]] = {}
    for owner, entry in files:
        contents = json.loads(entry.read_text(encoding="utf-8"))
        if contents["$id"] in items:
            raise packs.PackError(
                f"suite {owner!r}: schema {entry.name} claims the $id {contents['$id']!r} again"
            )
        items[contents["$id"]] = Resource.from_contents(contents, default_specification=DRAFT202012)
    return Registry().with_resources(items.items()).crawl()


def schema(schema_id: str) -> dict[str, Any]:
    contents: dict[str, Any] = registry().contents(schema_id)
    return contents


@cache
def validator(schema_id: str, definition: str | None = None) -> FastValidator:
    """A validator for a whole schema, or for one of its `$defs`, with format checking on.

    Compiled where it can be (`compiled.FastValidator`): results are checked on every page and call,
    and a conforming result then costs microseconds; jsonschema explains the ones that do not conform.
    """
    target: dict[str, Any] = (
        {"$ref": f"{schema_id}#/$defs/{definition}"} if definition else {"$ref": schema_id}
    )
    return FastValidator(target, registry=registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def errors(schema_id: str, definition: str | None, instance: Any, limit: int = 5) -> list[str]:
    """Violations as `pointer: message` lines, the most specific first, at most `limit`."""
    found = sorted(
        validator(schema_id, definition).iter_errors(instance), key=lambda e: -len(e.absolute_path)
    )
    return [f"/{'/'.join(str(p) for p in e.absolute_path)}: {said(e)}"[:300] for e in found[:limit]]


def said(error: Any) -> str:
    """A jsonschema error's message with the instance as JSON where jsonschema shows a Python repr
    (`None is not of type 'object'` is `null is not of type 'object'`): a view never shows a repr."""
    instance = error.instance
    if error.validator == "type" and not isinstance(instance, str):
        wanted = error.validator_value
        names = " or ".join(repr(w) for w in wanted) if isinstance(wanted, list) else repr(wanted)
        return f"{_json(instance)} is not of type {names}"
    if error.validator in ("enum", "const") and not isinstance(instance, str):
        verb = "is not one of" if error.validator == "enum" else "was expected to be"
        return f"{_json(instance)} {verb} {_json(error.validator_value)}"
    return str(error.message)


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def shape_errors(definition: str, instance: Any, era: str) -> list[str]:
    """Check a result against its shape in a revision, or in an era ("legacy" or "modern").

    Given a revision, the shape is the first definition found among `R:<definition>` for that
    revision and each newer one (a `2025-03-26:` shape serves 2024-11-05 too, unless 2024-11-05 has
    its own), then `modern:<definition>` for 2026-07-28, then the shared one: so a revision is never
    judged by a member a later revision added.
    """
    return errors(SHAPES_ID, shape_name(definition, era), instance)


def shape_name(definition: str, era: str) -> str:
    """The `$defs` name `shape_errors` validates against (see there)."""
    from conformance.protocol.versions import TESTED_REVISIONS, era_of

    candidates: list[str] = []
    if era not in ("legacy", "modern"):
        candidates = [f"{r}:{definition}" for r in sorted(TESTED_REVISIONS) if r >= era]
        era = era_of(era)
    if era == "modern":
        candidates.append(f"modern:{definition}")
    return next((name for name in candidates if _has(name)), definition)


def _has(definition: str) -> bool:
    return definition in schema(SHAPES_ID)["$defs"]
