"""Invalid inputs for the fuzz pack: a valid value with exactly one rule of its schema broken.

Why one rule: a server that accepts the input is told which rule it let through (`Mutation.rule`), so
the value must break that rule and no other; `invalid` keeps only values whose every validator error is
about the named keyword. The sites a value offers are read off the compiled schema (`compiler.Node`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from conformance.arguments.compiler import JSON_TYPES, TEXT, Node, pointer, same_json
from conformance.arguments.generate import bounds, long_text, scalars


@dataclass(frozen=True)
class Mutation:
    """Arguments that break exactly one rule, and which rule: `keyword` at `pointer` (the value's path)."""

    arguments: dict[str, Any]
    keyword: str
    pointer: str
    detail: str

    @property
    def rule(self) -> str:
        return f"{self.keyword} at {self.pointer or '/'}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Site:
    path: tuple[str | int, ...]
    keyword: str
    node: Node
    key: str = ""


def _other_types(allowed: frozenset[str]) -> set[str]:
    """JSON types a value could take that `allowed` refuses (an integer is a number)."""
    return set(JSON_TYPES) - allowed - ({"integer"} if "number" in allowed else set())


def _wrong_type(node: Node) -> SearchStrategy[Any]:
    """A value of a JSON type the node does not allow."""
    allowed = node.types or frozenset()
    options: list[SearchStrategy[Any]] = []
    if "null" not in allowed:
        options.append(st.none())
    if "boolean" not in allowed:
        options.append(st.booleans())
    if "integer" not in allowed and "number" not in allowed:
        options.append(st.integers())
    if "number" not in allowed:
        options.append(
            st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not float(f).is_integer())
        )
    if "string" not in allowed:
        options.append(st.text(TEXT, max_size=8))
    if "array" not in allowed:
        options.append(st.lists(scalars(), max_size=2))
    if "object" not in allowed:
        options.append(st.dictionaries(st.text(TEXT, max_size=5), scalars(), max_size=2))
    return st.one_of(options)


def _outside(values: list[Any]) -> SearchStrategy[Any]:
    """A value of the same type as the listed ones, but none of them."""
    first = values[0]
    base: SearchStrategy[Any]
    if isinstance(first, bool):
        base = st.booleans()
    elif isinstance(first, int):
        base = st.integers()
    elif isinstance(first, float):
        base = st.floats(allow_nan=False, allow_infinity=False)
    elif isinstance(first, str):
        base = st.text(TEXT, max_size=12)
    else:
        base = st.text(TEXT, max_size=12)
    return base.filter(lambda v: not any(same_json(v, x) for x in values))


def _past(node: Node, *, above: bool) -> SearchStrategy[Any]:
    """Numbers just past the node's upper bound (`above`) or its lower one, whole ones first."""
    integral = node.kinds() <= {"integer"}
    low, high, low_ex, high_ex = bounds(node, integral=False)
    if above:
        edge = math.ceil(high) if high_ex else math.floor(high) + 1
        ints = st.integers(min_value=edge)
        floats = st.floats(min_value=high, exclude_min=not high_ex, allow_nan=False, allow_infinity=False)
    else:
        edge = math.floor(low) if low_ex else math.ceil(low) - 1
        ints = st.integers(max_value=edge)
        floats = st.floats(max_value=low, exclude_max=not low_ex, allow_nan=False, allow_infinity=False)
    return ints if integral else st.one_of(ints, floats)


def sites(node: Node, value: Any, path: tuple[str | int, ...] = ()) -> list[Site]:
    """Where one rule can be broken in `value` (which is valid for `node`), and which rule."""
    out: list[Site] = []
    if node.enum is not None:
        return [Site(path, "const" if node.const else "enum", node)]
    if node.combined:
        return out  # which branch a value took is ambiguous: break nothing inside it
    if node.types is not None and path and _other_types(node.types):
        out.append(Site(path, "type", node))
    if isinstance(value, str):
        if node.max_length is not None and node.max_length < 100_000:
            out.append(Site(path, "maxLength", node))
        if node.min_length > 0:
            out.append(Site(path, "minLength", node))
    if isinstance(value, int | float) and not isinstance(value, bool):
        # The keyword the validator names is that of the tighter bound, the one a value just past breaks.
        low, _, low_ex, _ = bounds(node, integral=False)
        _, high, _, high_ex = bounds(node, integral=False)
        if low is not None:
            exclusive = "minimum" if node.draft4_exclusive else "exclusiveMinimum"
            out.append(Site(path, exclusive if low_ex else "minimum", node))
        if high is not None:
            exclusive = "maximum" if node.draft4_exclusive else "exclusiveMaximum"
            out.append(Site(path, exclusive if high_ex else "maximum", node))
    if isinstance(value, dict):
        out.extend(Site(path, "required", node, key) for key in node.required if key in value)
        if node.additional is False:
            out.append(Site(path, "additionalProperties", node))
        for key, sub in value.items():
            if key in node.props:
                out.extend(sites(node.props[key], sub, (*path, key)))
    if isinstance(value, list) and node.items is not None:
        for index, sub in enumerate(value[:3]):
            out.extend(sites(node.items, sub, (*path, index)))
    return out


def _breaker(site: Site, value: Any) -> tuple[SearchStrategy[Any], str]:
    """A strategy for the replacement value at the site, and a word about it; None value means delete."""
    node = site.node
    if site.keyword == "type":
        return _wrong_type(node), f"expected {'/'.join(sorted(node.types or ()))}"
    if site.keyword in ("enum", "const"):
        return _outside(node.enum or [None]), ""
    if site.keyword == "maxLength":
        assert node.max_length is not None
        return long_text(node.max_length + 1, node.max_length + 8), f"longer than {node.max_length}"
    if site.keyword == "minLength":
        return st.text(TEXT, max_size=min(node.min_length - 1, 16)), f"shorter than {node.min_length}"
    if site.keyword in ("minimum", "exclusiveMinimum"):
        return _past(node, above=False), "below the minimum"
    if site.keyword in ("maximum", "exclusiveMaximum"):
        return _past(node, above=True), "above the maximum"
    raise AssertionError(site.keyword)


def _place(value: Any, path: tuple[str | int, ...], replacement: Any) -> Any:
    out = copy.deepcopy(value)
    if not path:
        return replacement
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = replacement
    return out


def has_rules(node: Node) -> bool:
    if node.enum is not None or node.required or node.additional is False:
        return True
    if node.max_length is not None or node.min_length or node.minimum is not None:
        return True
    if node.maximum is not None or node.exclusive_minimum is not None or node.exclusive_maximum is not None:
        return True
    if node.types is not None and node.pointer:
        return True
    return any(has_rules(p) for p in node.props.values()) or (
        node.items is not None and has_rules(node.items)
    )


def invalid(
    valid: SearchStrategy[dict[str, Any]], root: Node, breaks_only: Callable[[Any, str], bool]
) -> SearchStrategy[Mutation]:
    """Arguments with exactly one rule broken: a `valid` value, then one site changed or removed, kept
    only when `breaks_only` says the validator finds that rule broken and nothing else."""

    @st.composite
    def mutate(draw: st.DrawFn) -> Mutation:
        value = draw(valid)
        found = sites(root, value)
        assume(found)
        # The rule first, then where: else the commonest rule (a required name) crowds out the rest.
        keyword = draw(st.sampled_from(sorted({s.keyword for s in found})))
        site = draw(st.sampled_from([s for s in found if s.keyword == keyword]))
        detail = ""
        if site.keyword == "required":
            mutated = copy.deepcopy(value)
            holder: Any = mutated
            for part in site.path:
                holder = holder[part]
            del holder[site.key]
            detail = f"{site.key!r} left out"
        elif site.keyword == "additionalProperties":
            holder_value: Any = value
            for part in site.path:
                holder_value = holder_value[part]
            known = set(site.node.props) | set(holder_value)
            key = draw(st.text(TEXT, min_size=1, max_size=10).filter(lambda k: k not in known))
            mutated = _place(value, site.path, {**holder_value, key: draw(scalars())})
            detail = f"extra property {key!r}"
        else:
            strategy, detail = _breaker(site, value)
            mutated = _place(value, site.path, draw(strategy))
        assume(breaks_only(mutated, site.keyword))
        return Mutation(mutated, site.keyword, pointer(site.path), detail)

    return mutate()
