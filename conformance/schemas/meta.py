"""Is a document a JSON Schema? The one judgement every suite applies to a tool's schemas.

Two levels, because JSON Schema has two. The metaschema decides whether a document is a schema at
all (the MCP rows that quote "a JSON Schema object" are MUSTs), and so do the formats the core
vocabulary mandates: `$schema` MUST be a URI and `$id` a URI-reference. A `pattern` (or a
`patternProperties` name) is different: JSON Schema 2020-12 validation section 6.3.3 says it
"SHOULD be a valid regular expression, according to the ECMA-262 regular expression dialect", so a
bad one is a warning, judged in ECMA-262's dialect (`ecma_regex`), never Python's.

jsonschema's `check_schema` mixes the two (its `regex` format is Python's `re`), so it would fail a
valid schema using `(?<year>\\d{4})` or `\\p{L}`, and would report a bad pattern as if the document
were no schema. Here the metaschema runs with the two format sets apart. A valid schema is confirmed
by the compiled metaschema (`compiled`), so 5,000 tools cost milliseconds, not seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, SchemaError
from jsonschema.protocols import Validator

from conformance.schemas.compiled import Predicate, compile_2020_12_metaschema
from conformance.schemas.ecma_regex import is_ecma_regex

REGEX = "regex"


@dataclass(frozen=True)
class MetaJudgement:
    """`error`: why the document is not a schema of its dialect (a MUST), or None.
    `bad_patterns`: each pattern that is not an ECMA-262 regular expression (a SHOULD)."""

    error: SchemaError | None = None
    bad_patterns: tuple[SchemaError, ...] = ()

    @property
    def clean(self) -> bool:
        return self.error is None and not self.bad_patterns


def judge(cls: type[Validator], schema: Any) -> MetaJudgement:
    """Judge `schema` against the metaschema of `cls` (the dialect it declares, resolved by the caller)."""
    fast = _compiled_2020_12() if cls is Draft202012Validator else None
    if fast is not None and fast(schema):
        return MetaJudgement()
    structural = cls(cls.META_SCHEMA, format_checker=_formats(cls, with_regex=False))
    error = next(iter(structural.iter_errors(schema)), None)
    patterns = cls(cls.META_SCHEMA, format_checker=_regex_only())
    bad = tuple(
        SchemaError.create_from(e)
        for e in patterns.iter_errors(schema)
        if e.validator == "format" and e.validator_value == REGEX
    )
    return MetaJudgement(SchemaError.create_from(error) if error is not None else None, bad)


def bad_patterns_message(places: list[str]) -> str:
    """The WARN text for patterns that are no regular expression, naming at most five places."""
    return (
        f"{len(places)} pattern(s) not a regular expression in ECMA-262's dialect (JSON Schema 2020-12"
        " validation 6.3.3: SHOULD): " + "; ".join(places[:5])
    )


def where(error: SchemaError) -> str:
    """The failing place inside the judged document, as a slash path (`(root)` for the top)."""
    return "/".join(str(p) for p in error.absolute_path) or "(root)"


def _formats(cls: type[Validator], with_regex: bool) -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checkers = {k: v for k, v in cls.FORMAT_CHECKER.checkers.items() if k != REGEX}
    if with_regex:
        checker.checks(REGEX)(is_ecma_regex)
    return checker


@cache
def _regex_only() -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checks(REGEX)(is_ecma_regex)
    return checker


@cache
def _compiled_2020_12() -> Predicate | None:
    """The 2020-12 metaschema with both format sets: True means no error and no bad pattern."""
    return compile_2020_12_metaschema(_formats(Draft202012Validator, with_regex=True))
