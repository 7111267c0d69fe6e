"""Valid values from a compiled schema: the hypothesis strategies of the fuzz pack's valid inputs and of
the careful arguments a client would send (`rank`).

Careful arguments (`Model.careful(rank)`) are the same strategies with the schema's own hints first:
`enum` and `const` values, `default`, `examples`, values quoted in a `description` ("e.g. 'Europe/Paris'")
and placeholders it names (HH:MM), then ordinary values (a word, the number 1) before anything random, no
property the schema does not name, null last. Their simplest example is what a careful client would send;
`rank` rotates the hints, so rank 1 tries the second value where a place offers several.

A value is not yet checked here: `strategies.Model` filters every one through the schema's validator.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from conformance.arguments.compiler import JSON_TYPES, LONG_STRING, TEXT, WORD, Node, Unsupported


def rotate(values: list[Any], rank: int) -> list[Any]:
    """`values` starting at the rank-th: the simplest example of a sampled_from is its first value."""
    shift = rank % len(values)
    return values[shift:] + values[:shift]


def scalars() -> SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(TEXT, max_size=12),
    )


def json_values(max_leaves: int = 16) -> SearchStrategy[Any]:
    """Any JSON value, nested: what an unconstrained (free-form) place may hold."""
    return st.recursive(
        scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=3), st.dictionaries(st.text(TEXT, max_size=6), children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


def long_text(low: int, high: int) -> SearchStrategy[str]:
    """A string of length low..high built by repeating a short seed: cheap at any length."""
    return st.tuples(st.text(TEXT, min_size=1, max_size=4), st.integers(low, high)).map(
        lambda t: (t[0] * (t[1] // len(t[0]) + 1))[: t[1]]
    )


def _text(low: int, high: int | None) -> SearchStrategy[str]:
    if low > LONG_STRING:
        return long_text(low, high if high is not None else low + 8)
    return st.text(TEXT, min_size=low, max_size=high)


def bounds(node: Node, integral: bool) -> tuple[Any, Any, bool, bool]:
    """(low, high, low exclusive, high exclusive) of a number node."""
    low, low_ex = node.minimum, False
    if node.exclusive_minimum is not None and (low is None or node.exclusive_minimum >= low):
        low, low_ex = node.exclusive_minimum, True
    high, high_ex = node.maximum, False
    if node.exclusive_maximum is not None and (high is None or node.exclusive_maximum <= high):
        high, high_ex = node.exclusive_maximum, True
    if integral:
        if low is not None:
            low = math.floor(low) + 1 if low_ex else math.ceil(low)
        if high is not None:
            high = math.ceil(high) - 1 if high_ex else math.floor(high)
    return low, high, low_ex, high_ex


def _integers(node: Node, careful: bool = False) -> SearchStrategy[int]:
    """Whole numbers within the node's bounds (none when the bounds hold no whole number); careful: 1
    first where the bounds allow it (0 is the simplest integer, and a count or limit of 0 is often
    refused)."""
    low, high, _, _ = bounds(node, integral=True)
    m = node.multiple_of
    if m:
        low = None if low is None else -((-low) // m)
        high = None if high is None else high // m
    if low is not None and high is not None and low > high:
        return st.nothing()
    if m:
        return st.integers(low, high).map(lambda k: k * m)
    whole = st.integers(low, high)
    if careful and (low is None or low <= 1) and (high is None or high >= 1):
        return st.one_of(st.just(1), whole)
    return whole


def _numbers(node: Node, careful: bool = False) -> SearchStrategy[Any]:
    if node.multiple_of:
        return _integers(node, careful)
    low, high, low_ex, high_ex = bounds(node, integral=False)
    floats = st.floats(
        min_value=low,
        max_value=high,
        exclude_min=low_ex and low is not None,
        exclude_max=high_ex and high is not None,
        allow_nan=False,
        allow_infinity=False,
    )
    return st.one_of(_integers(node, careful), floats)


def _word(low: int, high: int | None) -> str | None:
    """WORD cut or repeated to fit the length bounds; None when they admit no non-empty string."""
    size = max(low, min(len(WORD), high if high is not None else len(WORD)))
    if size == 0 or (high is not None and size > high):
        return None
    return (WORD * (size // len(WORD) + 1))[:size]


def _strings(node: Node, careful: bool = False) -> SearchStrategy[str]:
    low, high = node.min_length, node.max_length

    def fits(text: str) -> bool:
        return low <= len(text) and (high is None or len(text) <= high)

    if node.pattern is not None:
        return st.from_regex(node.pattern, alphabet=TEXT).filter(fits)
    if node.format in ("date-time", "time"):
        base: SearchStrategy[str] = st.datetimes(
            min_value=_datetime(1970), max_value=_datetime(2100), timezones=st.just(_utc())
        ).map(lambda d: d.isoformat() if node.format == "date-time" else d.timetz().isoformat())
    elif node.format == "date":
        base = st.dates(min_value=_datetime(1970).date(), max_value=_datetime(2100).date()).map(str)
    elif node.format == "email":
        base = st.from_regex(r"\A[a-z0-9]{1,10}@[a-z]{1,10}\.example\Z", alphabet=TEXT)
    elif node.format in ("uri", "uri-reference"):
        base = st.from_regex(r"\Ahttps://[a-z]{1,10}\.example/[a-z0-9]{0,10}\Z", alphabet=TEXT)
    elif node.format == "hostname":
        base = st.from_regex(r"\A[a-z]{1,10}\.example\Z", alphabet=TEXT)
    elif node.format in ("ipv4", "ipv6"):
        base = st.ip_addresses(v=4 if node.format == "ipv4" else 6).map(str)
    elif node.format == "uuid":
        base = st.uuids().map(str)
    elif careful:
        word = _word(low, high)
        text = _text(max(low, 1), high) if high is None or high >= 1 else _text(low, high)
        return st.one_of(st.just(word), text) if word is not None else text
    else:
        return _text(low, high)
    return base.filter(fits)


def _datetime(year: int) -> Any:
    import datetime

    return datetime.datetime(year, 1, 1)  # naive: hypothesis adds the zone


def _utc() -> Any:
    import datetime

    return datetime.UTC


def _arrays(node: Node, depth: int, rank: int | None) -> SearchStrategy[list[Any]]:
    element = value_strategy(node.items, depth + 1, rank) if node.items is not None else json_values(8)
    high = node.max_items if node.max_items is not None else node.min_items + 4
    unique = _canonical if node.unique else None
    return st.lists(element, min_size=node.min_items, max_size=high, unique_by=unique)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _objects(node: Node, depth: int, rank: int | None) -> SearchStrategy[dict[str, Any]]:
    required = {name: value_strategy(node.props.get(name), depth + 1, rank) for name in node.required}
    optional = {
        name: value_strategy(sub, depth + 1, rank)
        for name, sub in node.props.items()
        if name not in required and not sub.never
    }
    fixed = st.fixed_dictionaries(required, optional=optional)
    if node.additional is False or rank is not None:
        return fixed  # a careful client sends no property the schema does not name
    known = set(node.props)
    keys = st.text(TEXT, max_size=10).filter(lambda k: k not in known)
    if isinstance(node.additional, Node):
        extra = st.dictionaries(keys, value_strategy(node.additional, depth + 1), max_size=2)
    else:
        extra = st.dictionaries(keys, json_values(), max_size=4 if not node.props else 2)
    return st.builds(lambda a, b: {**b, **a}, fixed, extra)


def _null_last(branches: list[Node]) -> list[Node]:
    """Branches that admit only null after the others: a careful client sends a value where it can."""
    return sorted(branches, key=lambda b: b.types == frozenset({"null"}))


def value_strategy(node: Node | None, depth: int = 0, rank: int | None = None) -> SearchStrategy[Any]:
    """Values valid for `node` (filtered by its own validator where keywords interact).

    `rank` None: the fuzz suite's values. A number: careful values whose simplest example is the
    rank-th hint (or enum value) at each place that has any, and an ordinary value elsewhere.
    """
    if node is None:
        return json_values()
    if node.never:
        return st.nothing()
    if depth > 32:
        raise Unsupported(f"the schema at {node.pointer or '/'} nests more than 32 levels")
    if node.enum is not None:
        return st.sampled_from(rotate(node.enum, rank) if rank is not None else node.enum)
    if rank is not None and node.hints:
        return st.one_of(st.sampled_from(rotate(node.hints, rank)), _plain(node, depth, rank))
    return _plain(node, depth, rank)


def _plain(node: Node, depth: int, rank: int | None) -> SearchStrategy[Any]:
    careful = rank is not None
    if node.any_of or node.one_of:
        branches = node.any_of or node.one_of
        ordered = _null_last(branches) if careful else branches
        return st.one_of([value_strategy(b, depth + 1, rank) for b in ordered])
    kinds = node.kinds()
    if not kinds:
        return json_values()
    makers: dict[str, Callable[[], SearchStrategy[Any]]] = {
        "null": st.none,
        "boolean": st.booleans,
        "integer": lambda: _integers(node, careful),
        "number": lambda: _numbers(node, careful),
        "string": lambda: _strings(node, careful),
        "array": lambda: _arrays(node, depth, rank),
        "object": lambda: _objects(node, depth, rank),
    }
    order = [k for k in JSON_TYPES if k != "null"] + ["null"] if careful else list(JSON_TYPES)
    return st.one_of([makers[k]() for k in order if k in kinds])
