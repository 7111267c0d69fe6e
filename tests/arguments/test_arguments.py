"""The careful arguments the base suite calls tools with: built from the schema's own hints, valid, few,
and the same on every run."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from conformance.arguments import candidates as candidates_module
from conformance.arguments.candidates import CANDIDATES, candidates
from conformance.arguments.pacing import PACE_SECONDS, STEPS, Paced, paced
from conformance.arguments.strategies import build, described

ZONE = {
    "type": "string",
    "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Etc/UTC' as "
    "local timezone if no timezone provided by the user.",
}
STRICT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "day": {"type": "string", "format": "date"},
        "n": {"type": "integer", "minimum": 2, "maximum": 5},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
        "maybe": {"type": ["null", "string"]},
        "fixed": {"const": 7},
        "optional": {"type": "string"},
    },
    "required": ["unit", "code", "day", "n", "ratio", "tags", "where", "maybe", "fixed"],
    "additionalProperties": False,
}


def test_a_description_s_quoted_examples_come_first_then_the_others_in_turn() -> None:
    schema = {"type": "object", "properties": {"timezone": ZONE}, "required": ["timezone"]}
    assert candidates(schema).values() == [
        {"timezone": "America/New_York"},
        {"timezone": "Europe/London"},
        {"timezone": "Etc/UTC"},
    ]


def test_every_candidate_is_valid_and_fits_enum_pattern_format_bounds_and_nesting() -> None:
    model = build(STRICT)
    found = candidates(STRICT).values()
    assert 1 < len(found) <= CANDIDATES
    assert all(model.is_valid(v) for v in found)
    first = found[0]
    assert first["unit"] == "celsius" and found[1]["unit"] == "fahrenheit"  # rank 1: the next enum value
    assert len(first["code"]) == 3 and first["code"].isupper()
    assert len(first["day"]) == 10 and first["day"][4] == "-"
    assert first["n"] == 2 and 0 < first["ratio"] <= 0.5 and first["fixed"] == 7
    assert first["tags"] == ["example"] and isinstance(first["where"]["lat"], int | float)
    assert first["maybe"] == "example", "a careful client sends a value where null is only allowed"
    assert "optional" not in first, "only what the schema requires"


def test_defaults_and_examples_are_hints_only_where_the_schema_admits_them() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": 0, "default": 7, "examples": [-1, "no", 9]}},
        "required": ["a"],
    }
    assert candidates(schema).values() == [{"a": 7}, {"a": 9}]


def test_placeholders_and_prose_quotes() -> None:
    kinds = frozenset({"string"})
    assert described("Time in 24-hour format (HH:MM)", kinds) == ["12:00"]
    assert described("a date as YYYY-MM-DD", kinds) == ["2026-01-01"]
    # An apostrophe of prose opens no quote; a quoted number is read as JSON where a number goes.
    assert described("the user's name, or the server's", kinds) == []
    assert described("pages to read, e.g. '10'", frozenset({"integer"})) == [10]


def test_a_schema_the_converter_cannot_honour_gets_an_empty_object_only_if_it_admits_one() -> None:
    loose = candidates({"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}}]})
    assert loose.values() == [{}] and "allOf" in loose.problem
    strict = candidates({"type": "object", "allOf": [{"required": ["a"]}]})
    assert strict.values() == [] and "allOf" in strict.problem


def test_the_values_are_copies() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    candidates(schema).values()[0].pop("q")
    assert candidates(schema).values() == [{"q": "example"}]


def test_the_same_candidates_in_another_process() -> None:
    """Derandomized: a run sends the same arguments every time (snapshots and diffs rely on it)."""
    candidates_module._candidates.cache_clear()
    here = [
        candidates(s).values() for s in (STRICT, {"type": "object", "properties": {"s": {"type": "string"}}})
    ]
    code = (
        "import json, sys; from conformance.arguments.candidates import candidates; "
        "print(json.dumps([candidates(s).values() for s in json.loads(sys.argv[1])]))"
    )
    schemas = json.dumps([STRICT, {"type": "object", "properties": {"s": {"type": "string"}}}])
    out = subprocess.run(
        [sys.executable, "-c", code, schemas], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) == here


def test_a_strategy_that_cannot_draw_leaves_the_tool_uncalled_saying_why(monkeypatch: Any) -> None:
    from conformance.arguments import strategies

    def broken(self: Any, rank: int = 0) -> Any:
        raise ValueError("cannot draw")

    monkeypatch.setattr(strategies.Model, "careful", broken)
    candidates_module._candidates.cache_clear()
    schema = {"type": "object", "properties": {"z": {"type": "string"}}, "required": ["z"]}
    found = candidates(schema)
    assert found.values() == [] and "ValueError: cannot draw" in found.problem
    candidates_module._candidates.cache_clear()


# ------------------------------------------------------------------------------------------- pacing

EVERYTHING_LONG_RUN = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "duration": {"default": 10, "description": "Duration of the operation in seconds", "type": "number"},
        "steps": {"default": 5, "description": "Number of steps in the operation", "type": "number"},
    },
}


def test_pacing_asks_a_few_steps_and_a_short_wait() -> None:
    """server-everything's long-running operation (10 s by default) and a counter called with its
    minimum (steps 1, no delay) both get several steps and a short wait, within the budget."""
    sized = paced(EVERYTHING_LONG_RUN, {}, budget=5.0)
    assert sized is not None and sized.arguments == {"steps": STEPS, "duration": PACE_SECONDS}
    counter = {
        "type": "object",
        "properties": {"numSteps": {"type": "integer", "minimum": 1}, "delay_ms": {"type": "integer"}},
        "required": ["numSteps", "delay_ms"],
    }
    sized = paced(counter, {"numSteps": 1, "delay_ms": 0}, budget=5.0)
    assert sized is not None and sized.arguments == {"numSteps": STEPS, "delay_ms": int(PACE_SECONDS * 1000)}
    assert sized.longest <= 5.0 and "numSteps=3" in sized.line()


def test_pacing_keeps_within_the_schema_and_the_budget() -> None:
    bounded = {"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 2}}}
    assert paced(bounded, {}, budget=5.0) == Paced({"steps": 2}, ("steps=2",), 0.0)
    # A least wait of 10 s per step would outlast a 5 s budget: left as drawn, so nothing is sized.
    slow = {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 10}}}
    assert paced(slow, {"seconds": 10}, budget=5.0) is None
    # No property that counts or waits: the call keeps its own arguments.
    assert paced({"type": "object", "properties": {"timezone": {"type": "string"}}}, {}, budget=5.0) is None
    # Sized arguments the schema's validator refuses (3 is no multiple of 2) are not sent.
    closed = {"type": "object", "properties": {"steps": {"type": "integer", "multipleOf": 2}}}
    assert paced(closed, {}, budget=5.0) is None
