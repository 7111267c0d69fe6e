"""Tool schemas are judged at JSON Schema's own levels, with patterns read in ECMA-262's dialect.

- `ecma_regex.is_ecma_regex` must never call a valid ECMA-262 pattern invalid (that would put a
  false WARN, or before this module a false FAIL, on a server). Node's RegExp is the oracle when a
  `node` binary is present: thousands of generated patterns, one process.
- `meta.judge` separates "not a schema" (MUST) from "pattern not a regex" (SHOULD), and its compiled
  fast path must agree with the uncompiled judgement on every generated document.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator, validators

from conformance.schemas import meta
from conformance.schemas.ecma_regex import is_ecma_regex, python_spelling
from tests.schemas.test_compiled_schema import schema_documents

#: Valid ECMA-262 (Unicode mode) that Python's `re` refuses as written.
ECMA_ONLY = [
    r"^(?<year>\d{4})-(?<month>\d{2})$",
    r"(?<a>x)\k<a>",
    r"(?<$id>x)\k<$id>",
    r"^[\p{L}\p{N}_-]+$",
    r"\P{Lu}",
    r"\u{1F600}",
    r"\cJ",
    r"[^]",
    r"a[]",
    r"(?<=ab+)c",
    r"(?<!a*)b",
    r"\1(a)",
    r"(a\1)",
    r"(?<n>\k<n>)",
]
#: Not regular expressions in any dialect.
INVALID = [r"(", r"[a-", r"a**", r"x{2,1}", r"(?<n>a)(?<n>b)", r"\k<nope>(?<n>x)", "\\", r"(?<>x)"]

NODE = shutil.which("node")
ATOMS = str.split(
    "a b . ^ $ | * + ? {2} {1,} {2,1} { } ( ) [ ] [^ - (?: (?= (?! (?<= (?<! (?<n> \\k<n> \\1 \\2 "
    "\\d \\w \\s \\b \\B \\p{L} \\P{Lu} \\u{1F600} \\u0041 \\x41 \\cJ \\0 \\t \\- \\/ \\. \\e \\z é 😀"
)


@pytest.mark.parametrize("pattern", ECMA_ONLY)
def test_ecma_only_syntax_is_a_regex(pattern: str) -> None:
    assert is_ecma_regex(pattern), python_spelling(pattern)


@pytest.mark.parametrize("pattern", INVALID)
def test_broken_patterns_are_not(pattern: str) -> None:
    assert not is_ecma_regex(pattern)


def test_non_strings_are_left_to_the_type_keyword() -> None:
    assert is_ecma_regex(3)


def _node_verdicts(patterns: list[str]) -> list[bool]:
    assert NODE is not None
    script = (
        'const ps = JSON.parse(require("fs").readFileSync(0, "utf8"));'
        'process.stdout.write(JSON.stringify(ps.map(p => { try { new RegExp(p, "u"); return true; }'
        " catch (e) { return false; } })));"
    )
    done = subprocess.run(
        [NODE, "-e", script],
        input=json.dumps(patterns),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    verdicts: list[bool] = json.loads(done.stdout)
    return verdicts


@pytest.mark.skipif(NODE is None, reason="needs node for ECMA-262's own RegExp")
def test_no_valid_ecma_pattern_is_judged_invalid() -> None:
    rng = random.Random(20261130)
    patterns = sorted({"".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 6))) for _ in range(6000)})
    patterns += ECMA_ONLY + INVALID
    node = _node_verdicts(patterns)
    assert [p for p, ok in zip(patterns, node, strict=True) if p in ECMA_ONLY and not ok] == []
    assert [p for p, ok in zip(patterns, node, strict=True) if p in INVALID and ok] == []
    wrongly_refused = [p for p, ok in zip(patterns, node, strict=True) if ok and not is_ecma_regex(p)]
    assert wrongly_refused == []
    assert sum(node) > 400, "the generated corpus must hold many valid patterns"


# ------------------------------------------------------------------------------------ meta.judge


def test_valid_ecma_patterns_make_a_clean_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"d": {"type": "string", "pattern": ECMA_ONLY[0]}},
        "patternProperties": {r"^\p{Lu}": {}},
    }
    assert meta.judge(Draft202012Validator, schema).clean
    assert meta.judge(_UNCOMPILED, schema).clean


def test_a_bad_pattern_is_a_should_not_a_must() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}}
    judged = meta.judge(Draft202012Validator, schema)
    assert judged.error is None
    assert [meta.where(e) for e in judged.bad_patterns] == ["properties/a/pattern"]


def test_a_broken_schema_is_a_must_even_beside_a_bad_pattern() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "strnig", "pattern": "("}}}
    judged = meta.judge(Draft202012Validator, schema)
    assert judged.error is not None and meta.where(judged.error) == "properties/a/type"
    assert len(judged.bad_patterns) == 1


def test_mandated_formats_stay_musts() -> None:
    judged = meta.judge(Draft202012Validator, {"$schema": "not a uri"})
    assert judged.error is not None and judged.error.validator == "format"


#: The same dialect under another class: `judge` then takes its uncompiled path.
_UNCOMPILED = validators.extend(Draft202012Validator, {})


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_documents)
def test_compiled_judgement_agrees_with_uncompiled(document: Any) -> None:
    fast = meta.judge(Draft202012Validator, document)
    slow = meta.judge(_UNCOMPILED, document)
    assert fast.clean is slow.clean
    if not slow.clean:
        assert (fast.error is None) is (slow.error is None)
        assert len(fast.bad_patterns) == len(slow.bad_patterns)
