"""The compiled schema predicate answers exactly as jsonschema does.

`conformance.schemas.compiled` replaces jsonschema on the success path of hot checks (every listed
tool's inputSchema and outputSchema against the 2020-12 metaschema). A disagreement would be a wrong
verdict: "valid" where jsonschema finds an error hides a FAIL. So hypothesis generates schema-like
documents mixing every 2020-12 keyword with well- and ill-typed values, and each must get the same
yes/no from the compiled metaschema as from `Draft202012Validator.check_schema`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from conformance import schemas
from conformance.model import packs
from conformance.schemas.compiled import (
    FastValidator,
    Unsupported,
    compile_schema,
    metaschema_check,
    schema_error,
)

SHARED = Path(__file__).resolve().parents[3] / "shared"


def jsonschema_says_valid(document: Any) -> bool:
    try:
        Draft202012Validator.check_schema(document)
    except jsonschema.SchemaError:
        return False
    return True


def meta() -> Any:
    check = metaschema_check(Draft202012Validator)
    assert check is not None, "the 2020-12 metaschema must compile"
    return check


# ------------------------------------------------------------------------------------ strategies

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 1.5, -1.0, 1e300]),
    st.text(max_size=4),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
type_names = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null"])
uri_like = st.sampled_from(
    [
        "",
        "#",
        "#frag",
        "#/$defs/a",
        "a#",
        "a#b",
        "a#b#",
        "http://example.com/s",
        "urn:x:y",
        "with space",
        "http://[bad",
        "\\\\",
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema#",
    ]
)
anchors = st.sampled_from(["a", "_x-.9", "1a", "a\n", "", "a b", "meta"])
patterns = st.sampled_from(["^a$", "(", "[a-", "\\p{L}+", "^(?<y>\\d)$", "a{2,1}", "(?i)x", "\\d+", ""])
counts = st.one_of(st.integers(-2, 5), st.sampled_from([1.0, 1.5, -0.0]), st.text(max_size=2))
numbers = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, 2.0, 1e-9]), st.booleans(), st.text(max_size=2))
junk = st.one_of(scalars, st.lists(scalars, max_size=2))


def keyword_values(schema: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    schema_map = st.dictionaries(st.text(max_size=3), schema, max_size=3)
    schema_list = st.lists(schema, max_size=3)
    return {
        "type": st.one_of(type_names, st.lists(type_names, max_size=3), st.just("objec"), junk),
        "properties": schema_map | junk,
        "patternProperties": st.dictionaries(patterns, schema, max_size=2) | junk,
        "$defs": schema_map | junk,
        "dependentSchemas": schema_map | junk,
        "items": schema | junk,
        "additionalProperties": schema | junk,
        "unevaluatedProperties": schema | junk,
        "unevaluatedItems": schema | junk,
        "propertyNames": schema | junk,
        "contains": schema | junk,
        "not": schema | junk,
        "if": schema,
        "then": schema,
        "else": schema | junk,
        "contentSchema": schema | junk,
        "allOf": schema_list | junk,
        "anyOf": schema_list | junk,
        "oneOf": schema_list | junk,
        "prefixItems": schema_list | junk,
        "required": st.lists(st.text(max_size=2), max_size=3) | st.lists(scalars, max_size=2) | junk,
        "dependentRequired": st.dictionaries(st.text(max_size=2), st.lists(st.text(max_size=2), max_size=2))
        | junk,
        "enum": st.lists(json_values, max_size=3) | junk,
        "const": json_values,
        "minimum": numbers,
        "maximum": numbers,
        "exclusiveMinimum": numbers,
        "exclusiveMaximum": numbers,
        "multipleOf": numbers,
        "minLength": counts,
        "maxLength": counts,
        "minItems": counts,
        "maxItems": counts,
        "minProperties": counts,
        "maxProperties": counts,
        "minContains": counts,
        "maxContains": counts,
        "uniqueItems": st.booleans() | junk,
        "pattern": patterns | junk,
        "format": st.sampled_from(["uri", "regex", "date-time", "made-up"]) | junk,
        "$id": uri_like | junk,
        "$schema": uri_like | junk,
        "$ref": uri_like | junk,
        "$dynamicRef": uri_like | junk,
        "$anchor": anchors | junk,
        "$dynamicAnchor": anchors | junk,
        "$comment": st.text(max_size=3) | junk,
        "title": st.text(max_size=3) | junk,
        "description": st.text(max_size=3) | junk,
        "default": json_values,
        "examples": st.lists(json_values, max_size=2) | junk,
        "deprecated": st.booleans() | junk,
        "readOnly": st.booleans() | junk,
        "writeOnly": st.booleans() | junk,
        "contentEncoding": st.text(max_size=3) | junk,
        "contentMediaType": st.text(max_size=3) | junk,
        "$vocabulary": st.dictionaries(uri_like, st.booleans() | junk, max_size=2) | junk,
        "definitions": schema_map | junk,
        "dependencies": st.dictionaries(st.text(max_size=2), schema | st.lists(st.text(max_size=2))) | junk,
        "x-vendor": json_values,
        # Unknown keywords that look like known ones: ignored by jsonschema, so never compiled.
        "ref": uri_like,
        "$type": type_names,
    }


def _schema_object(schema: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    values = keyword_values(schema)
    return st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys})
    )


schema_documents = st.recursive(
    st.booleans() | st.just({}),
    _schema_object,
    max_leaves=12,
)


# ------------------------------------------------------------------------------------ properties


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_documents)
def test_compiled_metaschema_agrees_with_check_schema(document: Any) -> None:
    assert meta()(document) is jsonschema_says_valid(document)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_compiled_metaschema_agrees_on_any_json(document: Any) -> None:
    assert meta()(document) is jsonschema_says_valid(document)


@pytest.mark.parametrize(
    ("document", "valid"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}}, True),
        ({"type": "objec"}, False),
        ({"type": ["string", "string"]}, False),
        ({"required": [1]}, False),
        ({"minItems": -1}, False),
        ({"minItems": 1.0}, True),
        ({"properties": {"a": {"pattern": "("}}}, False),
        ({"$id": "a#b#"}, False),
        ({"$anchor": "1a"}, False),
        ({"$defs": {"x": {"type": 3}}}, False),
        ({"allOf": []}, False),
        ({"x-vendor": {"type": 3}}, True),
        ({"ref": 3, "type$": 4}, True),
        (True, True),
        (3, False),
    ],
)
def test_compiled_metaschema_known_answers(document: Any, valid: bool) -> None:
    assert meta()(document) is valid
    assert jsonschema_says_valid(document) is valid
    error = schema_error(Draft202012Validator, document)
    assert (error is None) is valid


def test_schema_error_keeps_jsonschema_message_and_other_dialects() -> None:
    error = schema_error(Draft202012Validator, {"properties": {"a": {"type": 3}}})
    assert error is not None and list(error.absolute_path) == ["properties", "a", "type"]
    draft7 = jsonschema.validators.validator_for({"$schema": "http://json-schema.org/draft-07/schema#"})
    assert metaschema_check(draft7) is None
    assert schema_error(draft7, {"type": "object"}) is None
    assert schema_error(draft7, {"type": 3}) is not None


def _corpus() -> list[tuple[str, Any]]:
    """Real schemas: the project's own, every tool schema in the vectors, and ../shared when present."""
    found: list[tuple[str, Any]] = []
    pack_schemas = [entry for pack in packs.installed().values() for entry in pack.schema_files()]
    for entry in [*schemas.core_schema_files(), *pack_schemas]:
        found.append((entry.name, json.loads(entry.read_text(encoding="utf-8"))))
    for pack in packs.installed().values():
        for name, entry in pack.vector_files():
            _collect(name, json.loads(entry.read_text(encoding="utf-8")), found)
    if SHARED.is_dir():
        for path in sorted(SHARED.rglob("*.json")):
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            _collect(path.name, doc, found)
            if isinstance(doc, dict) and "$schema" in doc:
                found.append((path.name, doc))
    return found


def _collect(where: str, node: Any, found: list[tuple[str, Any]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("inputSchema", "outputSchema"):
                found.append((f"{where}:{key}", value))
            _collect(where, value, found)
    elif isinstance(node, list):
        for value in node:
            _collect(where, value, found)


def _subschemas(node: Any) -> list[Any]:
    """Every schema nested in `node` through the common applicators, itself included."""
    found = [node]
    if isinstance(node, dict):
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(node.get(key), dict):
                for value in node[key].values():
                    found.extend(_subschemas(value))
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                found.extend(_subschemas(node[key]))
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                for value in node[key]:
                    found.extend(_subschemas(value))
    return found


def test_compiled_metaschema_agrees_on_real_schemas() -> None:
    corpus = [(name, sub) for name, doc in _corpus() for sub in _subschemas(doc)]
    assert len(corpus) > 500
    disagreements = [name for name, doc in corpus if meta()(doc) is not jsonschema_says_valid(doc)]
    assert disagreements == []
    valid = sum(jsonschema_says_valid(doc) for _, doc in corpus)
    assert valid > 500, "the corpus must mostly exercise the yes path, the one the compiler decides"


# ------------------------------------------------------------------------------------ FastValidator


def test_fast_validator_keeps_jsonschema_errors() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    fast = FastValidator(schema)
    assert fast.fast is not None
    assert fast.is_valid({"a": 1})
    assert list(fast.iter_errors({"a": 1})) == []
    assert [e.message for e in fast.iter_errors({"a": "x"})] == ["'x' is not of type 'integer'"]


def test_unknown_keywords_are_never_read_as_known_ones() -> None:
    """`ref` is not `$ref`, `$type` is not `type`: jsonschema ignores them, and so must the answer."""
    for schema in ({"$type": "string"}, {"ref": "#/$defs/no", "$defs": {"no": False}}):
        with pytest.raises(Unsupported):
            compile_schema(schema)
        assert FastValidator(schema).is_valid(3)


def test_unsupported_keywords_fall_back_to_jsonschema() -> None:
    schema = {"type": "array", "contains": {"const": 1}}
    with pytest.raises(Unsupported):
        compile_schema(schema)
    fast = FastValidator(schema)
    assert fast.fast is None
    assert not fast.is_valid([2]) and fast.is_valid([1])


#: Small names and values, so generated instances often meet the generated schemas' properties.
names = st.sampled_from(["a", "b", "c", "ab", "\U0001f600"])
small = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, 0.5]), names)
instances = st.recursive(
    small,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=6,
)


def _compilable_object(schema: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    values: dict[str, st.SearchStrategy[Any]] = {
        "type": type_names | st.lists(type_names, min_size=1, max_size=2, unique=True),
        "properties": st.dictionaries(names, schema, max_size=2),
        "required": st.lists(names, max_size=2, unique=True),
        "additionalProperties": schema,
        "propertyNames": schema,
        "items": schema,
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minProperties": st.integers(0, 2),
        "maxProperties": st.integers(0, 2),
        "minLength": st.integers(0, 2),
        "maxLength": st.integers(0, 2) | st.just(1.0),
        "uniqueItems": st.booleans(),
        "enum": st.lists(small, min_size=1, max_size=3),
        "const": small,
        "minimum": st.integers(-1, 1) | st.just(0.5),
        "exclusiveMinimum": st.integers(-1, 1),
        "maximum": st.integers(-1, 1) | st.just(0.5),
        "exclusiveMaximum": st.integers(-1, 1),
        "pattern": st.sampled_from(["^a", "b$", "[ab]"]),
        "allOf": st.lists(schema, min_size=1, max_size=2),
        "anyOf": st.lists(schema, min_size=1, max_size=2),
        "oneOf": st.lists(schema, min_size=1, max_size=2),
        "not": schema,
        "title": st.text(max_size=2),
    }
    return st.lists(st.sampled_from(sorted(values)), max_size=3, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys})
    )


compilable_schemas = st.recursive(st.booleans() | st.just({}), _compilable_object, max_leaves=8)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(compilable_schemas, st.lists(instances, min_size=1, max_size=6))
def test_compiled_schema_agrees_with_validator(schema: Any, values: list[Any]) -> None:
    """Every schema built of compiled keywords validates every instance as jsonschema does."""
    predicate = compile_schema(schema)
    reference = Draft202012Validator(schema)
    for value in values:
        assert predicate(value) is reference.is_valid(value), value


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}, True),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"b": 1}, False),
        ({"additionalProperties": {"type": "integer"}}, {"a": 1.0}, True),
        ({"items": {"type": "integer"}, "minItems": 2}, [1, 2.0], True),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [{"a": [0]}, {"a": [False]}], True),
        ({"enum": [1]}, True, False),
        ({"const": [1, {"a": None}]}, [1.0, {"a": None}], True),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, False),
        ({"pattern": "b$"}, "ab\n", True),
        ({"propertyNames": {"pattern": "^a"}}, {"ab": 1, "b": 2}, False),
        ({"$defs": {"n": {"type": "null"}}, "items": {"$ref": "#/$defs/n"}}, [None, 0], False),
    ],
)
def test_compiled_schema_known_answers(schema: Any, instance: Any, valid: bool) -> None:
    assert compile_schema(schema)(instance) is valid
    assert Draft202012Validator(schema).is_valid(instance) is valid


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_documents, st.lists(json_values, min_size=1, max_size=4))
def test_any_schema_the_compiler_takes_agrees(schema: Any, values: list[Any]) -> None:
    """Arbitrary documents: whatever compiles (the rest falls back) agrees with jsonschema."""
    if not jsonschema_says_valid(schema):
        return
    try:
        predicate = compile_schema(schema)
    except Unsupported:
        return
    reference = Draft202012Validator(schema)
    for value in values:
        try:
            expected = reference.is_valid(value)
        except RecursionError:  # a schema that refers to itself without consuming the instance
            with pytest.raises(RecursionError):
                predicate(value)
            continue
        assert predicate(value) is expected, value
