"""The few arguments the base suite tries on a tool: what a careful client would send, deterministic.

A tool called with arguments it cannot accept (the string "x" as a time zone) answers with an error, and
every check that needs a successful result is left unjudged. So each candidate is the simplest example
of `Model.careful(rank)` for ranks 0, 1, 2: the schema's own hints first (enum, const, default,
examples, a description's quoted values and placeholders), ordinary values after, each checked by the
schema's validator. hypothesis draws them derandomized, so a run sends the same arguments every time.

A schema the converter cannot honour (allOf, not, ...) still gets `{}` when its validator admits it.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

from jsonschema import validators

from conformance.arguments.home import hypothesis_home
from conformance.arguments.strategies import Unsupported, build

#: Candidates per tool: each one is a call, tried until one succeeds.
CANDIDATES = 3


@dataclass(frozen=True)
class Candidates:
    """The arguments to try, in order; `problem` says why there are none (or only the fallback)."""

    arguments: tuple[str, ...]
    problem: str = ""

    def values(self) -> list[dict[str, Any]]:
        """Fresh copies: a check may change the arguments it sends (leave out a required one)."""
        return [json.loads(text) for text in self.arguments]


def candidates(schema: Any, count: int = CANDIDATES) -> Candidates:
    """Up to `count` distinct valid arguments for `schema`, the likeliest to succeed first.

    Cached per schema: the base suite asks again in every revision, and many tools share one schema.
    """
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return Candidates((), "the inputSchema is not JSON")
    return _candidates(key, count)


@functools.lru_cache(maxsize=1024)
def _candidates(key: str, count: int) -> Candidates:
    schema = json.loads(key)
    try:
        model = build(schema)
    except Unsupported as exc:
        return _fallback(schema, str(exc))
    found: list[str] = []
    seen: set[str] = set()
    for rank in range(count):
        try:
            value = simplest(model.careful(rank))
        except Exception as exc:  # hypothesis cannot draw from it (a regex construct it lacks, say)
            if found:
                break
            return _fallback(schema, f"no arguments could be drawn ({type(exc).__name__}: {exc})"[:300])
        if value is None:
            break
        canonical = json.dumps(value, sort_keys=True)
        if canonical not in seen:
            seen.add(canonical)
            found.append(json.dumps(value, ensure_ascii=False))
    if not found:
        return Candidates((), "no arguments valid under the inputSchema could be built")
    return Candidates(tuple(found))


def _fallback(schema: Any, why: str) -> Candidates:
    """`{}` for a schema the converter cannot honour, when its own validator admits it."""
    if isinstance(schema, dict):
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            if cls(schema).is_valid({}):
                return Candidates(("{}",), f"{why}; only {{}} is tried")
        except Exception:  # a schema the validator cannot run: no arguments rather than a guess
            pass
    return Candidates((), why)


def simplest(strategy: Any) -> Any:
    """hypothesis's simplest example of `strategy`, derandomized; None when it has no valid example."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.errors import Unsatisfiable

    drawn: list[Any] = []

    @settings(
        database=None,
        max_examples=1,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(strategy)
    def draw(value: Any) -> None:
        if not drawn:
            drawn.append(copy.deepcopy(value))

    try:
        with hypothesis_home():
            draw()
    except Unsatisfiable:
        return None
    return drawn[0] if drawn else None
