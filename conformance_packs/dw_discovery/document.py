"""The discovery document as data: schema validation, the row each violation belongs to, JSON helpers.

Pure functions only (no I/O, no session), so the project's tests can drive them with vectors and
hypothesis without a server, and every check of the suite judges with the same code.

Validation uses jsonschema's Draft 2020-12 validator over the project's offline registry, with format
checking on, and one correction: JSON Schema patterns are ECMA-262 regular expressions, in which `$`
matches only at the end of the string, while Python's `re.search` also lets `$` match before a final
newline. Without the correction a tool named "list\\n" would pass `^[a-zA-Z0-9_.:-]+$`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from conformance.pack_api import EcmaDraft202012Validator, schema_registry
from conformance.pack_api import schema as core_schema

SCHEMA_ID = "durable-workflow.v2.mcp-discovery"
#: The `$id` of the tool-result envelope schema, which `output_schema` names (plural, G-D2).
TOOL_RESULTS_ID = "durable-workflow.v2.mcp-tool-results"
#: The `schema` const inside an envelope (singular, G-D2).
TOOL_RESULT_MARKER = "durable-workflow.v2.mcp-tool-result"
#: `durable_surface` values that catalog version 14 added; the seed (version 13) does not know them.
V14_SURFACES = ("workflow_diagnostics", "safe_mutation")
#: Annotation keywords a comparison of input schemas ignores (DWD-TOOL-002).
ANNOTATIONS = frozenset({"description", "title"})


@dataclass(frozen=True)
class Violation:
    """One schema violation: where in the document, which keyword, where in the schema, which row."""

    pointer: str
    keyword: str
    schema_path: str
    message: str
    row: str
    instance: Any = None

    def line(self) -> str:
        return f"{self.pointer or '/'}: {self.keyword}: {self.message} (schema {self.schema_path})"

    def as_dict(self) -> dict[str, str]:
        return {
            "pointer": self.pointer,
            "keyword": self.keyword,
            "schema_path": self.schema_path,
            "message": self.message,
        }


@cache
def schema() -> dict[str, Any]:
    return core_schema(SCHEMA_ID)


def catalog_version() -> int:
    """The Durable Workflow catalog version the bundled schema expresses (13 for the seed)."""
    return int(schema()["x-durable-workflow-catalog-version"])


def validator_for(schema_doc: dict[str, Any]) -> Validator:
    """A format-checking 2020-12 validator (ECMA patterns) for any schema, resolved in the registry."""
    return EcmaDraft202012Validator(
        schema_doc, registry=schema_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


@cache
def _validator() -> Validator:
    return validator_for(schema())


def pointer(parts: Iterable[Any]) -> str:
    """An RFC 6901 JSON pointer ("" is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def keyword_location(root: dict[str, Any], path: Sequence[Any]) -> str:
    """The absolute location of a failing keyword, following local `$ref`s (jsonschema omits them)."""
    node: Any = root
    where: list[Any] = []
    for part in path:
        while isinstance(node, dict) and part not in node and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if not ref.startswith("#"):
                break
            where = [p.replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p]
            node = root
            for step in where:
                node = node[step]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
        where.append(part)
    return "#" + pointer(where)


_TOOL_ROWS = {
    "name": "DWD-DOC-008",
    "description": "DWD-DOC-009",
    "input_schema": "DWD-DOC-010",
    "output_schema": "DWD-DOC-011",
    "annotations": "DWD-DOC-012",
    "durable_surface": "DWD-DOC-013",
}
_ROOT_ROWS = {
    "schema": "DWD-DOC-003",
    "version": "DWD-DOC-004",
    "server": "DWD-DOC-005",
    "payload_preview_limit_bytes": "DWD-DOC-006",
}


def row_of(path: Sequence[Any], instance: Any) -> str:
    """The catalog row a violation belongs to, from the (ref-free) schema path jsonschema reports.

    A `durable_surface` value that only catalog version 14 knows is version skew (DWD-SCHEMA-002), not
    a broken enum (DWD-DOC-013): the evolution rule makes new enum cases additive.
    """
    parts = list(path)
    if parts == ["type"]:
        return "DWD-DOC-001"
    if parts == ["required"]:
        return "DWD-DOC-002"
    if len(parts) >= 2 and parts[0] == "properties":
        if parts[1] in _ROOT_ROWS:
            return _ROOT_ROWS[parts[1]]
        if parts[1] == "tools":
            rest = parts[2:]
            if rest in (["type"], ["items", "type"], ["items", "required"]):
                return "DWD-DOC-007"
            if len(rest) >= 3 and rest[:2] == ["items", "properties"] and rest[2] in _TOOL_ROWS:
                row = _TOOL_ROWS[rest[2]]
                if row == "DWD-DOC-013" and rest[-1] == "enum" and instance in V14_SURFACES:
                    return "DWD-SCHEMA-002"
                return row
    return "DWD-DOC-001"  # not reachable with the bundled schema; never drop a violation


def validate(document: Any) -> list[Violation]:
    """Every violation of the discovery schema, in document order."""
    found = []
    for error in _validator().iter_errors(document):
        found.append(
            Violation(
                pointer=pointer(error.absolute_path),
                keyword=str(error.validator),
                schema_path=keyword_location(schema(), list(error.schema_path)),
                message=error.message[:300],
                row=row_of(list(error.schema_path), error.instance),
                instance=error.instance,
            )
        )
    return sorted(found, key=lambda v: (v.pointer, v.keyword))


def violations_of(found: Iterable[Violation], *rows: str) -> list[Violation]:
    return [v for v in found if v.row in rows]


def describe(found: Sequence[Violation], limit: int = 10) -> str:
    lines = [v.line() for v in found[:limit]]
    if len(found) > limit:
        lines.append(f"... and {len(found) - limit} more")
    return "; ".join(lines)


def integral_float(value: Any) -> bool:
    """A float with an integral value: an integer for 2020-12, a float for many JSON consumers."""
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def tools_of(document: Any) -> list[dict[str, Any]]:
    """The tool objects of a document (ignoring items that are not objects)."""
    if not isinstance(document, dict) or not isinstance(document.get("tools"), list):
        return []
    return [t for t in document["tools"] if isinstance(t, dict)]


def is_absolute_url(value: str) -> bool:
    parts = urlsplit(value)
    return bool(parts.scheme) and bool(parts.netloc)


def is_json_mime(mime: Any) -> bool:
    """`application/json`, `text/json` or any `+json` type, parameters ignored."""
    if not isinstance(mime, str):
        return False
    base = mime.split(";", 1)[0].strip().lower()
    return base in ("application/json", "text/json") or base.endswith("+json")


# ----------------------------------------------------------------------------- JSON comparison

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "contentSchema",
)


def strip_annotations(node: Any) -> Any:
    """A copy of a JSON Schema without `description`/`title` in any schema position.

    Schema-aware on purpose: a property *named* "title" (a key of `properties`) is part of the contract
    and stays; only the annotation keywords go.
    """
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ANNOTATIONS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip_annotations(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [strip_annotations(sub) for sub in value]
        elif key in _SCHEMA_ONE and isinstance(value, dict):
            out[key] = strip_annotations(value)
        elif key == "items" and isinstance(value, list):
            out[key] = [strip_annotations(sub) for sub in value]
        else:
            out[key] = value
    return out


def json_differences(left: Any, right: Any, at: str = "", limit: int = 10) -> list[str]:
    """Pointers (with both values) where two JSON values differ; booleans never equal numbers."""
    found: list[str] = []
    _diff(left, right, at, found, limit)
    return found


def _diff(left: Any, right: Any, at: str, found: list[str], limit: int) -> None:
    if len(found) >= limit:
        return
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            here = at + pointer([key])
            if key not in left or key not in right:
                side = "only in the document" if key in left else "only live"
                found.append(f"{here} {side}")
                if len(found) >= limit:
                    return
            else:
                _diff(left[key], right[key], here, found, limit)
        return
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            found.append(f"{at or '/'}: {_short(left)} vs {_short(right)}")
            return
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            _diff(a, b, f"{at}/{index}", found, limit)
        return
    if not _scalar_equal(left, right):
        found.append(f"{at or '/'}: {_short(left)} vs {_short(right)}")


def _scalar_equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return type(left) is type(right) and bool(left == right)


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_with(schema_id: str, instance: Any) -> list[Violation]:
    """Violations of any registry schema (e.g. the tool-result envelope), with pointer/keyword/path."""
    root = core_schema(schema_id)
    return sorted(
        (
            Violation(
                pointer=pointer(e.absolute_path),
                keyword=str(e.validator),
                schema_path=keyword_location(root, list(e.schema_path)),
                message=e.message[:300],
                row="",
                instance=e.instance,
            )
            for e in validator_for(root).iter_errors(instance)
        ),
        key=lambda v: (v.pointer, v.keyword),
    )


# ----------------------------------------------------------------------------- the contract over time


def contract_view(document: Any) -> Any:
    """The document without what may change freely: tool descriptions and schema annotations."""
    if not isinstance(document, dict):
        return document
    view = dict(document)
    if isinstance(document.get("tools"), list):
        view["tools"] = [
            {
                **{k: v for k, v in tool.items() if k != "description"},
                **(
                    {"input_schema": strip_annotations(tool["input_schema"])}
                    if "input_schema" in tool
                    else {}
                ),
            }
            if isinstance(tool, dict)
            else tool
            for tool in document["tools"]
        ]
    return view


def _types(schema: dict[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return None  # unconstrained


def _covered(old: set[str], new: set[str]) -> bool:
    """Every type the old schema accepted is still accepted (integer is inside number)."""
    return all(t in new or (t == "integer" and "number" in new) for t in old)


def _narrowings(old: Any, new: Any, at: str, found: list[str]) -> None:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    old_types, new_types = _types(old), _types(new)
    if new_types is not None and (old_types is None or not _covered(old_types, new_types)):
        found.append(f"{at or '/'}: type narrowed from {sorted(old_types or ['any'])} to {sorted(new_types)}")
    added = sorted(set(_strings(new.get("required"))) - set(_strings(old.get("required"))))
    if added:
        found.append(f"{at or '/'}: new required properties {added}")
    if "enum" in new and isinstance(new["enum"], list):
        old_enum = old.get("enum") if isinstance(old.get("enum"), list) else None
        lost = [v for v in old_enum if v not in new["enum"]] if old_enum is not None else ["(any value)"]
        if lost:
            found.append(f"{at or '/'}: enum narrowed, no longer accepts {lost[:5]}")
    if "const" in new and ("const" not in old or old["const"] != new["const"]):
        found.append(f"{at or '/'}: const {new['const']!r} added or changed")
    if new.get("additionalProperties") is False and old.get("additionalProperties") is not False:
        found.append(f"{at or '/'}: additionalProperties closed")
    old_props: dict[str, Any] = old["properties"] if isinstance(old.get("properties"), dict) else {}
    new_props: dict[str, Any] = new["properties"] if isinstance(new.get("properties"), dict) else {}
    for name in sorted(set(old_props) - set(new_props)):
        found.append(f"{at}/properties/{name}: property removed")
    for name in sorted(set(old_props) & set(new_props)):
        _narrowings(old_props[name], new_props[name], f"{at}/properties/{name}", found)
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        _narrowings(old["items"], new["items"], f"{at}/items", found)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def breaking_changes(baseline: Any, current: Any) -> tuple[list[str], str]:
    """(breaking changes, note) from a baseline to the current document (DWD-TOOL-004).

    Under `additive_minor_breaking_major`, with the same `version`: a removed or renamed tool, a new
    required property, a narrowed type or enum, or a changed output_schema id is breaking; a new tool,
    a new optional property or a new enum case is not; descriptions never matter (DWD-TOOL-005).
    A higher `version` allows breaking changes; a lower one is itself a break.
    """
    if not isinstance(baseline, dict) or not isinstance(current, dict):
        return ["the baseline or the document is not an object"], ""
    old_version, new_version = baseline.get("version"), current.get("version")
    if old_version != new_version:
        if isinstance(old_version, int) and isinstance(new_version, int) and new_version > old_version:
            return [], f"version went from {old_version} to {new_version}: breaking changes are allowed"
        return [f"version went from {old_version!r} to {new_version!r}"], ""
    old_tools = {t.get("name"): t for t in tools_of(baseline)}
    new_tools = {t.get("name"): t for t in tools_of(current)}
    found: list[str] = [
        f"tool {name!r} was removed or renamed" for name in old_tools if name not in new_tools
    ]
    for name, old in old_tools.items():
        new = new_tools.get(name)
        if new is None:
            continue
        if old.get("output_schema") != new.get("output_schema"):
            found.append(
                f"tool {name!r}: output_schema changed from {old.get('output_schema')!r} "
                f"to {new.get('output_schema')!r}"
            )
        changes: list[str] = []
        _narrowings(old.get("input_schema"), new.get("input_schema"), "", changes)
        found.extend(f"tool {name!r}: input_schema {change}" for change in changes)
    added = sorted(str(n) for n in new_tools if n not in old_tools)
    return found, (f"additive: new tools {added}" if added else "")
