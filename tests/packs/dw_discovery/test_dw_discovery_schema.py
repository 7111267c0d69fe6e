"""The bundled discovery schema against the seed, and the pure helpers every dw-discovery check uses.

Why: the suite's verdicts are only as true as its schema and its row mapping. These tests pin the
schema to the seed (same validation keywords, same sha256 of the seed's bytes, same verdict on every
vector), the violation report (pointer, keyword, schema path through `$ref`), and the offline rows
DWD-SCHEMA-001, DWD-DOC-014 and DWD-TOOL-005, which no live check can judge.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformance import schemas
from conformance.model.targets import Target
from conformance.model.vectors import load
from conformance.schemas.ecma_regex import search_pattern
from conformance_packs.dw_discovery import document as dwd
from conformance_packs.dw_discovery import locate

REPO_ROOT = Path(__file__).resolve().parents[3]
SEEDS = REPO_ROOT.parent / "shared" / "seeds"
SEED_NAME = "001_4caa94b0a9e66c23.txt"
ANNOTATION_KEYS = {"title", "description", "$comment", "examples"}


def seed() -> dict[str, Any]:
    """The seed schema, or SKIP where the shared folder is not beside the repository."""
    path = SEEDS / SEED_NAME
    if not path.is_file():
        pytest.skip(f"the seed is not available at ../shared/seeds/{SEED_NAME}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def constraints(node: Any, names: bool = False) -> Any:
    """A schema without annotations (title, description, examples, x-*): what validation depends on.

    `names` marks a map whose keys are names (`properties`, `$defs`), where no key is an annotation.
    """
    if isinstance(node, dict):
        if names:
            return {k: constraints(v) for k, v in node.items()}
        return {
            k: constraints(v, names=k in ("properties", "$defs"))
            for k, v in node.items()
            if k not in ANNOTATION_KEYS and not k.startswith("x-")
        }
    if isinstance(node, list):
        return [constraints(v) for v in node]
    return node


def test_bundled_schema_is_2020_12_and_in_the_registry() -> None:
    bundled = schemas.schema(dwd.SCHEMA_ID)
    assert bundled["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert bundled["$id"] == "durable-workflow.v2.mcp-discovery"
    Draft202012Validator.check_schema(bundled)
    assert dwd.catalog_version() == 13
    assert set(bundled["x-mcp-conformance-seed"]["v14-only-durable-surfaces"]) == set(dwd.V14_SURFACES)


def test_bundled_schema_has_exactly_the_seeds_constraints() -> None:
    assert constraints(schemas.schema(dwd.SCHEMA_ID)) == constraints(seed())


def test_seed_bytes_still_hash_to_the_pinned_sha256() -> None:
    seed()  # skips without the seed
    pinned = schemas.schema(dwd.SCHEMA_ID)["x-mcp-conformance-seed"]["sha256"]
    assert hashlib.sha256((SEEDS / SEED_NAME).read_bytes()).hexdigest() == pinned


def test_schema_and_seed_agree_on_every_vector() -> None:
    ours, theirs = dwd.validator_for(schemas.schema(dwd.SCHEMA_ID)), dwd.validator_for(seed())
    vectors = load("dw-discovery", "documents.json")
    assert len(vectors) >= 40
    for vector in vectors:
        verdicts = (ours.is_valid(vector["document"]), theirs.is_valid(vector["document"]))
        assert verdicts == (vector["valid"], vector["valid"]), vector["id"]


def test_a_violation_names_pointer_keyword_and_schema_path_through_refs() -> None:
    found = dwd.validate(
        {
            "schema": dwd.SCHEMA_ID,
            "version": 1,
            "tools": [{"name": "a/b", "input_schema": {"type": "object", "required": ["x", 2]}}],
        }
    )
    assert [(v.pointer, v.keyword, v.schema_path, v.row) for v in found] == [
        (
            "/tools/0/input_schema/required/1",
            "type",
            "#/$defs/jsonSchemaObject/properties/required/items/type",
            "DWD-DOC-010",
        ),
        ("/tools/0/name", "pattern", "#/$defs/tool/properties/name/pattern", "DWD-DOC-008"),
    ]
    assert "/tools/0/name: pattern:" in found[1].line()


def test_json_pointers_escape_tilde_and_slash() -> None:
    assert dwd.pointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0"
    found = dwd.validate({"schema": dwd.SCHEMA_ID, "version": 1, "tools": [], "server": {"name": 1}})
    assert [v.pointer for v in found] == ["/server/name"]


def test_patterns_use_ecma_anchors() -> None:
    # Python's `$` also matches before a final newline; ECMA-262's (JSON Schema's) does not.
    doc = {"schema": dwd.SCHEMA_ID, "version": 1, "tools": [{"name": "ok\n", "input_schema": {"type": "x"}}]}
    assert [(v.pointer, v.keyword) for v in dwd.validate(doc)] == [("/tools/0/name", "pattern")]
    assert search_pattern("^[a$]+$").pattern == r"^[a$]+\Z"
    assert search_pattern(r"^a\$$").pattern == r"^a\$\Z"


def test_format_checking_is_on() -> None:
    validator = dwd.validator_for({"type": "string", "format": "uri"})
    assert not validator.is_valid("not a uri")


def test_extra_members_at_every_level_are_accepted() -> None:
    """DWD-DOC-014 self-test: additionalProperties is true at the root, in server, tool and input_schema."""
    doc = {
        "schema": dwd.SCHEMA_ID,
        "version": 1,
        "extra": [1],
        "server": {"name": None, "extra": {}},
        "tools": [
            {"name": "t", "input_schema": {"type": "object", "extra": 1}, "annotations": {"x": 1}, "extra": 2}
        ],
    }
    assert dwd.validate(doc) == []


def test_annotations_are_stripped_only_in_schema_positions() -> None:
    schema = {
        "type": "object",
        "title": "T",
        "description": "D",
        "properties": {"title": {"type": "string", "description": "kept name, dropped annotation"}},
        "items": [{"title": "x", "type": "integer"}],
    }
    assert dwd.strip_annotations(schema) == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "items": [{"type": "integer"}],
    }


def test_json_differences_never_equate_booleans_and_numbers() -> None:
    assert dwd.json_differences({"const": True}, {"const": 1}) == ["/const: true vs 1"]
    assert dwd.json_differences({"minimum": 1}, {"minimum": 1.0}) == []
    assert dwd.json_differences({"a": 1}, {"b": 1}) == ["/a only in the document", "/b only live"]


BASELINE: dict[str, Any] = {
    "schema": dwd.SCHEMA_ID,
    "version": 2,
    "tools": [
        {
            "name": "get_workflow_history",
            "description": "old words",
            "input_schema": {
                "type": "object",
                "description": "old",
                "properties": {"workflow_id": {"type": "string"}, "mode": {"enum": ["a", "b"]}},
                "required": ["workflow_id"],
            },
            "output_schema": dwd.TOOL_RESULTS_ID,
        }
    ],
}


def _changed(**tool_changes: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASELINE))
    doc["tools"][0].update(tool_changes)
    return doc


def test_descriptions_may_change_without_a_break() -> None:
    """DWD-TOOL-005 self-test: a baseline that differs only in descriptions is no breaking change."""
    current = _changed(description="new words")
    current["tools"][0]["input_schema"]["description"] = "new"
    assert dwd.breaking_changes(BASELINE, current) == ([], "")


def test_additive_changes_are_not_breaking() -> None:
    schema = json.loads(json.dumps(BASELINE["tools"][0]["input_schema"]))
    schema["properties"]["limit"] = {"type": "integer"}
    schema["properties"]["mode"]["enum"].append("c")
    current = _changed(input_schema=schema)
    current["tools"].append({"name": "list_workflows", "input_schema": {"type": "object"}})
    assert dwd.breaking_changes(BASELINE, current) == ([], "additive: new tools ['list_workflows']")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"name": "history"}, "tool 'get_workflow_history' was removed or renamed"),
        ({"output_schema": "other"}, "output_schema changed"),
        (
            {
                "input_schema": {
                    "type": "object",
                    "required": ["workflow_id", "run_id"],
                    "properties": {"workflow_id": {"type": "string"}, "mode": {"enum": ["a", "b"]}},
                }
            },
            "new required properties ['run_id']",
        ),
        (
            {
                "input_schema": {
                    "type": "object",
                    "required": ["workflow_id"],
                    "properties": {"workflow_id": {"type": "integer"}, "mode": {"enum": ["a", "b"]}},
                }
            },
            "/properties/workflow_id: type narrowed",
        ),
        (
            {
                "input_schema": {
                    "type": "object",
                    "required": ["workflow_id"],
                    "properties": {"workflow_id": {"type": "string"}, "mode": {"enum": ["a"]}},
                }
            },
            "/properties/mode: enum narrowed",
        ),
    ],
)
def test_breaking_changes_are_named(change: dict[str, Any], expected: str) -> None:
    breaks, _ = dwd.breaking_changes(BASELINE, _changed(**change))
    assert any(expected in b for b in breaks), breaks


def test_a_higher_version_allows_breaking_changes() -> None:
    current = _changed(name="history")
    current["version"] = 3
    assert dwd.breaking_changes(BASELINE, current)[0] == []
    current["version"] = 1
    assert dwd.breaking_changes(BASELINE, current)[0] == ["version went from 2 to 1"]


def _ctx(target: Target, **table: Any) -> Any:
    settings = {locate.TABLE: table} if table else {}
    return SimpleNamespace(target=Target(**{**target.__dict__, "settings": settings}))


@pytest.mark.parametrize(
    ("target", "url", "refused"),
    [
        (Target(kind="http", url="http://127.0.0.1:8000/mcp"), "http://127.0.0.1:8000/d.json", False),
        (Target(kind="http", url="http://127.0.0.1:8000/mcp"), "http://127.0.0.1:8001/d.json", True),
        (Target(kind="http", url="http://127.0.0.1:8000/mcp"), "https://127.0.0.1:8000/d.json", True),
        (Target(kind="http", url="http://localhost/mcp"), "http://localhost:80/d.json", False),
        (Target(kind="stdio", argv=("x",)), "http://127.0.0.1:9/d.json", False),
        (Target(kind="stdio", argv=("x",)), "http://[::1]:9/d.json", False),
        (Target(kind="stdio", argv=("x",)), "http://192.0.2.1/d.json", True),
        (Target(kind="stdio", argv=("x",)), "file:///etc/passwd", True),
    ],
)
def test_discovery_urls_stay_on_the_targets_origin(target: Target, url: str, refused: bool) -> None:
    if refused:
        with pytest.raises(locate.Refused):
            locate.check_url(_ctx(target), url)
    else:
        locate.check_url(_ctx(target), url)


@pytest.mark.parametrize(
    "table",
    [
        {"resource": 1},
        {"tool_arguments": []},
        {"preview_arguments": "x"},
        {"smoke_arguments": {"t": 1}},
        {"nope": 1},
    ],
)
def test_malformed_settings_are_refused(table: dict[str, Any]) -> None:
    with pytest.raises(locate.Refused):
        locate.settings(_ctx(Target(kind="stdio", argv=("x",)), **table))


def test_json_mime_types() -> None:
    assert dwd.is_json_mime("application/json; charset=utf-8")
    assert dwd.is_json_mime("application/schema+json")
    assert not dwd.is_json_mime("text/plain")
    assert not dwd.is_json_mime(None)


def test_strict_json_refuses_nan() -> None:
    assert locate.parse_json('{"a": NaN}')[1] is not None
    assert locate.parse_json('{"a": 1}') == ({"a": 1}, None)
