"""Property-based vectors: documents generated from the discovery schema, and one-step mutations of them.

Why own strategies: hypothesis-jsonschema 0.23.1 installs, but cannot generate any object with the
hypothesis this project pins (6.170: `AttributeError: 'many' object has no attribute 'more'`), and the
discovery schema is mostly objects. The generator below walks the schema itself and covers exactly the
keywords the schema uses; an unknown keyword raises, so a schema that grows one fails here loudly
instead of being generated around.

Properties: every generated document validates (against the bundled schema, and against the seed when
`../shared/seeds` is there); every mutation that breaks one constraint gives exactly its violation,
attributed to its row.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import schemas
from conformance_packs.dw_discovery.document import SCHEMA_ID, V14_SURFACES, validate, validator_for

SCHEMA = schemas.schema(SCHEMA_ID)
SEED = Path(__file__).resolve().parents[3].parent / "shared" / "seeds" / "001_4caa94b0a9e66c23.txt"
VALIDATION = {
    "type",
    "const",
    "enum",
    "minimum",
    "pattern",
    "required",
    "properties",
    "additionalProperties",
    "items",
}
IGNORED = {"$schema", "$id", "$defs", "title", "description"}
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Per mutation: 19 mutations x 30 documents keeps the file within a few seconds.
MUTATION_SETTINGS = settings(SETTINGS, max_examples=30)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def from_schema(node: Any) -> st.SearchStrategy[Any]:
    """Values valid for `node`, for the keywords the discovery schema uses."""
    if node is True or node == {}:
        return JSON_VALUES
    assert isinstance(node, dict)
    if "$ref" in node:
        target = node["$ref"]
        assert target.startswith("#/$defs/"), target
        return st.deferred(lambda: from_schema(SCHEMA["$defs"][target.split("/")[-1]]))
    unknown = {k for k in node if not k.startswith("x-")} - VALIDATION - IGNORED
    if unknown:
        raise NotImplementedError(f"the generator does not know {sorted(unknown)}")
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    return st.one_of([_of_type(kind, node) for kind in kinds])


def _of_type(kind: str, node: dict[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "integer":
        ints = st.integers(min_value=node.get("minimum"), max_value=2**53)
        return ints | ints.map(float)  # 3.0 is an integer in 2020-12
    if kind == "string":
        pattern = node.get("pattern")
        if pattern is None:
            return st.text(max_size=12)
        assert pattern.startswith("^") and pattern.endswith("$")
        return st.from_regex(pattern[1:-1], fullmatch=True)
    if kind == "array":
        return st.lists(from_schema(node.get("items", True)), max_size=4)
    assert kind == "object", kind
    props: dict[str, Any] = node.get("properties", {})
    required = node.get("required", [])
    known = st.fixed_dictionaries(
        {name: from_schema(props[name]) for name in required},
        optional={name: from_schema(sub) for name, sub in props.items() if name not in required},
    )
    if node.get("additionalProperties", True) is False:
        return known
    extra = st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k not in props), JSON_VALUES, max_size=2
    )
    return st.tuples(known, extra).map(lambda pair: {**pair[1], **pair[0]})


DOCUMENTS = from_schema(SCHEMA)


@SETTINGS
@given(DOCUMENTS)
def test_generated_documents_validate(document: dict[str, Any]) -> None:
    assert validate(document) == []
    if SEED.is_file():
        assert validator_for(json.loads(SEED.read_text(encoding="utf-8"))).is_valid(document)


Mutation = Callable[[dict[str, Any], st.DataObject], tuple[str, str, str] | None]


def _tool_index(doc: dict[str, Any], data: st.DataObject) -> int | None:
    if not doc["tools"]:
        return None
    return data.draw(st.integers(0, len(doc["tools"]) - 1), label="tool")


def drop_required(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    del doc[data.draw(st.sampled_from(["schema", "version", "tools"]))]
    return "", "required", "DWD-DOC-002"


def wrong_schema(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    doc["schema"] = data.draw(st.text(max_size=40).filter(lambda s: s != SCHEMA_ID))
    return "/schema", "const", "DWD-DOC-003"


def low_version(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    doc["version"] = data.draw(st.integers(max_value=0))
    return "/version", "minimum", "DWD-DOC-004"


def string_version(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    doc["version"] = str(doc["version"])
    return "/version", "type", "DWD-DOC-004"


def bad_server(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    member = data.draw(st.sampled_from(["name", "version", "cluster_info_url"]))
    doc["server"] = {**(doc.get("server") or {}), member: data.draw(st.integers() | st.booleans())}
    return f"/server/{member}", "type", "DWD-DOC-005"


def negative_limit(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    doc["payload_preview_limit_bytes"] = data.draw(st.integers(max_value=-1))
    return "/payload_preview_limit_bytes", "minimum", "DWD-DOC-006"


def tools_not_array(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str]:
    doc["tools"] = {str(i): t for i, t in enumerate(doc["tools"])}
    return "/tools", "type", "DWD-DOC-007"


def drop_tool_member(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str] | None:
    i = _tool_index(doc, data)
    if i is None:
        return None
    del doc["tools"][i][data.draw(st.sampled_from(["name", "input_schema"]))]
    return f"/tools/{i}", "required", "DWD-DOC-007"


def bad_name(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str] | None:
    i = _tool_index(doc, data)
    if i is None:
        return None
    bad = data.draw(st.sampled_from([" ", "/", "é", "\n", "#", "@"]))
    doc["tools"][i]["name"] = data.draw(st.sampled_from(["", doc["tools"][i]["name"]])) + bad
    return f"/tools/{i}/name", "pattern", "DWD-DOC-008"


def set_member(
    name: str, member: str, value: st.SearchStrategy[Any], keyword: str, row: str, *, nested: bool = False
) -> Mutation:
    """Set `member` of a tool (of its input_schema with `nested`) to a value its constraint refuses."""

    def mutate(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str] | None:
        i = _tool_index(doc, data)
        if i is None:
            return None
        target = doc["tools"][i]["input_schema"] if nested else doc["tools"][i]
        target[member] = data.draw(value)
        where = f"/tools/{i}/input_schema/{member}" if nested else f"/tools/{i}/{member}"
        return where, keyword, row

    mutate.__name__ = name
    return mutate


def input_without_type(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str] | None:
    i = _tool_index(doc, data)
    if i is None:
        return None
    del doc["tools"][i]["input_schema"]["type"]
    return f"/tools/{i}/input_schema", "required", "DWD-DOC-010"


def required_with_number(doc: dict[str, Any], data: st.DataObject) -> tuple[str, str, str] | None:
    i = _tool_index(doc, data)
    if i is None:
        return None
    doc["tools"][i]["input_schema"]["required"] = ["a", data.draw(st.integers())]
    return f"/tools/{i}/input_schema/required/1", "type", "DWD-DOC-010"


SURFACES = set(SCHEMA["$defs"]["tool"]["properties"]["durable_surface"]["enum"])

MUTATIONS: list[Mutation] = [
    drop_required,
    wrong_schema,
    low_version,
    string_version,
    bad_server,
    negative_limit,
    tools_not_array,
    drop_tool_member,
    bad_name,
    set_member(
        "bad_description",
        "description",
        st.integers() | st.lists(st.text(), max_size=2),
        "type",
        "DWD-DOC-009",
    ),
    set_member("input_schema_not_object", "input_schema", st.text() | st.booleans(), "type", "DWD-DOC-010"),
    input_without_type,
    set_member(
        "input_type_not_string", "type", st.integers() | st.none(), "type", "DWD-DOC-010", nested=True
    ),
    set_member(
        "input_properties_not_object",
        "properties",
        st.lists(st.text(), max_size=2) | st.text(),
        "type",
        "DWD-DOC-010",
        nested=True,
    ),
    required_with_number,
    set_member(
        "output_schema_not_string", "output_schema", st.integers() | st.booleans(), "type", "DWD-DOC-011"
    ),
    set_member(
        "annotations_not_object",
        "annotations",
        st.lists(st.integers(), max_size=2) | st.text(),
        "type",
        "DWD-DOC-012",
    ),
    set_member(
        "unknown_surface",
        "durable_surface",
        st.text(max_size=20).filter(lambda s: s not in SURFACES and s not in V14_SURFACES),
        "enum",
        "DWD-DOC-013",
    ),
    set_member("v14_surface", "durable_surface", st.sampled_from(V14_SURFACES), "enum", "DWD-SCHEMA-002"),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.__name__ for m in MUTATIONS])
def test_one_step_mutations_break_exactly_their_constraint(mutation: Mutation) -> None:
    @MUTATION_SETTINGS
    @given(DOCUMENTS, st.data())
    def run(document: dict[str, Any], data: st.DataObject) -> None:
        mutated = copy.deepcopy(document)
        expected = mutation(mutated, data)
        if expected is None:
            return  # not applicable to this document (no tools)
        where, keyword, row = expected
        found = validate(mutated)
        assert [(v.pointer, v.keyword, v.row) for v in found] == [(where, keyword, row)], mutated

    run()
