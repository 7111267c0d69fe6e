"""The schema-to-strategy converter: valid inputs are valid, invalid ones break exactly the named rule,
unsupported schemas are refused with the reason, and a seed fixes the sequence.

These run hypothesis in-process on the converter alone (no server), so they are fast and exact.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis.strategies import SearchStrategy

from conformance.arguments.strategies import Mutation, Unsupported, build
from conformance_packs.base.common import find_trace
from conformance_packs.fuzz.explore import strip_echo

RICH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 12},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "kind": {"const": "probe"},
        "count": {"type": "integer", "minimum": -5, "maximum": 500},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "step": {"type": "integer", "multipleOf": 5},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]{1,6}$"}, "maxItems": 3},
        "when": {"type": "string", "format": "date-time"},
        "id": {"type": ["string", "null"]},
        "choice": {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]},
        "either": {"anyOf": [{"type": "boolean"}, {"$ref": "#/$defs/point"}]},
        "options": {
            "type": "object",
            "properties": {"label": {"type": "string"}, "meta": {"type": "object"}},
            "required": ["label"],
            "additionalProperties": False,
        },
        "long": {"type": "string", "minLength": 200, "maxLength": 210},
    },
    "required": ["text", "mode", "kind", "count"],
    "additionalProperties": False,
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        }
    },
}
QUICK = settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))


def _collect(strategy: SearchStrategy[Any], seed_value: int, count: int = 150) -> list[Any]:
    seen: list[Any] = []

    @settings(QUICK, max_examples=count)
    @seed(seed_value)
    @given(strategy)
    def collect(value: Any) -> None:
        seen.append(value)

    collect()
    return seen


def test_valid_inputs_are_valid_and_cover_the_schema() -> None:
    model = build(RICH)
    values = _collect(model.valid(), 1)
    assert values and all(model.is_valid(v) for v in values)
    present = Counter(key for v in values for key in v)
    # Every optional property shows up, and required ones always do.
    assert set(present) == set(RICH["properties"])
    assert all(present[name] == len(values) for name in RICH["required"])


def test_invalid_inputs_break_exactly_the_named_rule() -> None:
    model = build(RICH)
    # Three seeds: hypothesis biases generation with constants it finds in the loaded project modules,
    # so what a seed draws shifts with any code change; the rarer rules (exclusiveMaximum on an optional
    # property) need the margin.
    mutations: list[Mutation] = [m for s in (1, 2, 3) for m in _collect(model.invalid(), s, 200)]
    keywords = Counter(m.keyword for m in mutations)
    for mutation in mutations:
        errors = list(model.validator.iter_errors(mutation.arguments))
        assert errors, mutation
        assert {e.validator for e in errors} == {mutation.keyword}, (mutation, [e.message for e in errors])
    # Every rule of the issue has a place to break in this schema, and each is broken.
    wanted = {"required", "type", "enum", "const", "additionalProperties", "maxLength", "minLength"}
    assert wanted <= set(keywords), keywords
    assert {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} <= set(keywords), keywords


def test_a_seed_fixes_the_sequence() -> None:
    model = build(RICH)
    first = [json.dumps(v, sort_keys=True) for v in _collect(model.valid(), 42, 50)]
    again = [json.dumps(v, sort_keys=True) for v in _collect(build(RICH).valid(), 42, 50)]
    other = [json.dumps(v, sort_keys=True) for v in _collect(build(RICH).valid(), 43, 50)]
    assert first == again
    assert first != other


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "allOf": [{"required": ["a"]}]}, "'allOf'"),
        ({"type": "object", "patternProperties": {"^x": {}}}, "'patternProperties'"),
        ({"type": "object", "properties": {"a": {"not": {"type": "string"}}}}, "'not' at /properties/a"),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
          "properties": {"a": {"type": "array", "items": [{}]}}}, "tuple-form items"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}, "not a local"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}},
          "$defs": {"n": {"$ref": "#/$defs/n"}}}, "recursive"),
        ({"type": "object", "properties": {"a": {"type": "number", "multipleOf": 0.1}}}, "whole multiples"),
        ({"type": "object", "properties": {"a": {"type": "strnig"}}}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "\\p{L}+"}}}, "Python can run"),
        ({"type": "array"}, "admits no object"),
        ({"$schema": "https://example.com/no-such-dialect", "type": "object"}, "unknown dialect"),
    ],
)  # fmt: skip
def test_unsupported_schemas_are_refused_with_the_reason(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(Unsupported) as caught:
        build(schema)
    assert reason in str(caught.value)


def test_unknown_keywords_and_formats_are_noted_not_refused() -> None:
    model = build(
        {"type": "object", "properties": {"a": {"type": "string", "format": "idn-hostname", "x-ui": 1}}}
    )
    assert any("x-ui" in n for n in model.notes) and any("idn-hostname" in n for n in model.notes)


def test_a_schema_with_no_rule_has_no_invalid_input() -> None:
    assert not build({"type": "object"}).breakable()
    assert build({"type": "object", "additionalProperties": False}).breakable()


def test_an_echoed_input_is_no_leak() -> None:
    path = "/home/user/app/server.py"
    echoed = f"Invalid arguments: {path!r} is not of type 'integer'"
    assert find_trace(echoed) is not None
    assert find_trace(strip_echo(echoed, {"n": path})) is None
    leak = 'Invalid arguments\nTraceback (most recent call last):\n  File "/srv/app/h.py", line 3, in f'
    assert find_trace(strip_echo(leak, {"n": "abc"})) is not None


@pytest.mark.parametrize(
    ("bounds", "keywords"),
    [
        ({"minimum": 5, "exclusiveMinimum": 0}, {"minimum"}),
        ({"minimum": 0, "exclusiveMinimum": 5}, {"exclusiveMinimum"}),
        ({"maximum": 10, "exclusiveMaximum": 3}, {"exclusiveMaximum"}),
    ],
)
def test_a_number_is_pushed_past_its_tighter_bound(bounds: dict[str, Any], keywords: set[str]) -> None:
    model = build({"type": "object", "properties": {"n": {"type": "number", **bounds}}, "required": ["n"]})
    found = {m.keyword for m in _collect(model.invalid(), 5, 60)} - {"type", "required"}
    assert found == keywords


def test_draft4_boolean_exclusive_bounds() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
        "required": ["n"],
    }
    model = build(schema)
    assert all(v["n"] >= 1 for v in _collect(model.valid(), 3, 40))
    below = [m for m in _collect(model.invalid(), 3, 60) if m.keyword == "minimum"]
    assert below and all(m.arguments["n"] <= 0 for m in below)
