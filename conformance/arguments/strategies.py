"""Hypothesis strategies built from a tool's inputSchema: valid arguments, arguments that break exactly
one rule of the schema (the fuzz suite), and the careful arguments a client would send (the base suite).

Why a converter of our own: the fuzz suite must know *which* rule an invalid input breaks, to name it
when a server accepts it, and must refuse schemas it cannot honour rather than send wrong data. So the
converter covers the common keywords (type, properties, required, additionalProperties, enum, const,
string lengths and pattern, number bounds, arrays, nested objects, anyOf/oneOf, local `$ref`), and a
schema with any other validation keyword raises `Unsupported`: the tool is skipped, with the reason.

Every value is checked with a JSON Schema validator of the schema's own dialect before it is used: a
"valid" input is valid, and an "invalid" one fails on exactly the named keyword and nothing else. A gap
in the converter therefore costs examples, never a false verdict.

Careful arguments (`Model.careful(rank)`) are the same strategies with the schema's own hints first:
`enum` and `const` values, `default`, `examples`, values quoted in a `description` ("e.g. 'Europe/Paris'")
and placeholders it names (HH:MM), then ordinary values (a word, the number 1) before anything random, no
property the schema does not name, null last. Their simplest example is what a careful client would send;
`rank` rotates the hints, so rank 1 tries the second value where a place offers several.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from jsonschema import validators

from conformance.schemas.compiled import schema_error

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
#: Every character a JSON string can carry (all of Unicode but lone surrogates): hypothesis's default
#: text alphabet, named by category instead of by the "utf-8" codec. Named by codec, hypothesis first
#: tabulates which of the 1.1 million code points the codec encodes, about 200 MB at its peak, in each
#: process whose hypothesis home holds no such table yet, as the harness's private home never does.
TEXT = st.characters(exclude_categories=["Cs"])
#: Keywords that only describe: ignored, as a validator ignores them.
ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$comment", "$anchor", "$defs", "definitions", "title", "description",
        "default", "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType",
        "contentEncoding", "contentSchema",
    }
)  # fmt: skip
#: Validation keywords this converter honours.
SUPPORTED = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const", "minLength",
        "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "items", "minItems", "maxItems", "uniqueItems", "anyOf", "oneOf", "$ref",
    }
)  # fmt: skip
#: Validation keywords it does not: a schema using one is skipped rather than fuzzed with wrong data.
UNSUPPORTED = frozenset(
    {
        "allOf", "not", "if", "then", "else", "patternProperties", "propertyNames", "dependentRequired",
        "dependentSchemas", "dependencies", "minProperties", "maxProperties", "prefixItems",
        "additionalItems", "contains", "minContains", "maxContains", "unevaluatedProperties",
        "unevaluatedItems", "$dynamicRef", "$recursiveRef",
    }
)  # fmt: skip
#: Formats given values of their own (the validator does not assert format, but servers may).
FORMATS = ("date-time", "date", "time", "email", "uri", "uri-reference", "uuid", "hostname", "ipv4", "ipv6")
#: Hints kept per place: each is one more candidate rank, and a candidate is one more call.
MAX_HINTS = 4
#: A value quoted in a description, as examples are ('Europe/Paris', "UTC", `main`): no whitespace inside,
#: so an apostrophe of prose ("the user's name") does not open a quote.
QUOTED = re.compile(r"""'([^'\s]{1,100})'|"([^"\s]{1,100})"|`([^`\s]{1,100})`""")
#: Placeholders a description names for a string's form, and a value of that form.
PLACEHOLDERS = {
    "YYYY-MM-DDTHH:MM:SS": "2026-01-01T12:00:00",
    "YYYY-MM-DD": "2026-01-01",
    "HH:MM:SS": "12:00:00",
    "HH:MM": "12:00",
}
PLACEHOLDER = re.compile("|".join(re.escape(k) for k in PLACEHOLDERS))
#: The ordinary string a careful client sends where nothing else is known (cut or repeated to fit).
WORD = "example"
#: Longest nesting of `$ref` followed before a schema counts as recursive.
MAX_REF_DEPTH = 12
#: Strings longer than this are built by repetition: hypothesis bounds the choices one example may make.
LONG_STRING = 64


class Unsupported(Exception):
    """The schema uses something the converter cannot honour; the message says what and where."""


@dataclass(repr=False)
class Node:
    """One subschema, compiled: what a value at this place may be."""

    pointer: str
    schema: dict[str, Any]
    #: Declared types, or None when any type is allowed.
    types: frozenset[str] | None = None
    #: Allowed values (`enum`, or `const` as a one-element list), or None.
    enum: list[Any] | None = None
    const: bool = False
    #: A `false` schema: no value is valid here.
    never: bool = False
    props: dict[str, Node] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    #: None: any extra property allowed; False: none; a Node: extras must match it.
    additional: Node | bool | None = None
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    #: Draft-4 style boolean exclusives: the validator reports them as `minimum`/`maximum`.
    draft4_exclusive: bool = False
    multiple_of: int | None = None
    items: Node | None = None
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False
    any_of: list[Node] = field(default_factory=list)
    one_of: list[Node] = field(default_factory=list)
    #: Values the schema suggests for this place (default, examples, a description's quotes), each
    #: valid here: what careful arguments try first.
    hints: list[Any] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Node({self.pointer or '/'})"

    @property
    def combined(self) -> bool:
        return bool(self.any_of or self.one_of)

    def kinds(self) -> frozenset[str]:
        """The types values are generated in: declared, or read off the keywords when undeclared."""
        if self.types is not None:
            return self.types
        s = self.schema
        inferred = set()
        if {"properties", "required", "additionalProperties"} & s.keys():
            inferred.add("object")
        if {"minLength", "maxLength", "pattern", "format"} & s.keys():
            inferred.add("string")
        if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & s.keys():
            inferred.add("number")
        if {"items", "minItems", "maxItems", "uniqueItems"} & s.keys():
            inferred.add("array")
        return frozenset(inferred)


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


def pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


class Compiler:
    def __init__(self, root: dict[str, Any], validator: Any = None) -> None:
        self.root = root
        #: The root's validator: a hint is kept only if its place's subschema admits it (local `$ref`s
        #: still resolve against the root).
        self.validator = validator
        self.notes: list[str] = []

    def compile(self, schema: Any, where: str, refs: int = 0) -> Node:
        if schema is True:
            return Node(where, {})
        if schema is False:
            return Node(where, {}, never=True)
        if not isinstance(schema, dict):
            raise Unsupported(f"the subschema at {where or '/'} is not an object")
        if "$ref" in schema:
            return self._ref(schema, where, refs)
        for key in schema:
            if key in UNSUPPORTED:
                raise Unsupported(f"keyword {key!r} at {where or '/'} is not supported by the converter")
        unknown = sorted(k for k in schema if k not in SUPPORTED and k not in ANNOTATIONS)
        if unknown:
            self.notes.append(
                f"ignored unknown keywords {unknown} at {where or '/'} (validators ignore them)"
            )
        node = Node(where, schema)
        self._types(node)
        if "enum" in schema:
            if not isinstance(schema["enum"], list) or not schema["enum"]:
                raise Unsupported(f"enum at {where or '/'} is not a non-empty list")
            node.enum = list(schema["enum"])
        if "const" in schema:
            node.enum, node.const = [schema["const"]], True
        self._strings(node)
        self._numbers(node)
        self._arrays(node, refs)
        self._objects(node, refs)
        for combinator in ("anyOf", "oneOf"):
            if combinator in schema:
                branches = schema[combinator]
                if not isinstance(branches, list) or not branches:
                    raise Unsupported(f"{combinator} at {where or '/'} is not a non-empty list")
                compiled = [
                    self.compile(b, f"{where}/{combinator}/{i}", refs) for i, b in enumerate(branches)
                ]
                if combinator == "anyOf":
                    node.any_of = compiled
                else:
                    node.one_of = compiled
        node.hints = self._hints(node)
        return node

    def _hints(self, node: Node) -> list[Any]:
        """The values the schema itself suggests for this place, deduplicated, each admitted by it."""
        s = node.schema
        found: list[Any] = []
        if "default" in s:
            found.append(s["default"])
        if isinstance(s.get("examples"), list):
            found.extend(s["examples"])
        if isinstance(s.get("description"), str):
            found.extend(described(s["description"], node.kinds()))
        hints: list[Any] = []
        for value in found:
            if len(hints) >= MAX_HINTS:
                break
            if not any(_same_json(value, h) for h in hints) and self._admits(s, value):
                hints.append(value)
        return hints

    def _admits(self, schema: dict[str, Any], value: Any) -> bool:
        if self.validator is None:
            return False
        try:
            return bool(self.validator.evolve(schema=schema).is_valid(value))
        except Exception:  # a subschema the validator cannot run alone: no hint rather than a wrong one
            return False

    def _ref(self, schema: dict[str, Any], where: str, refs: int) -> Node:
        ref = schema["$ref"]
        siblings = [k for k in schema if k != "$ref" and k not in ANNOTATIONS]
        if siblings:
            raise Unsupported(f"$ref with sibling keywords {sorted(siblings)} at {where or '/'}")
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unsupported(f"$ref {ref!r} at {where or '/'} is not a local reference")
        if refs >= MAX_REF_DEPTH:
            raise Unsupported(f"$ref {ref!r} at {where or '/'} nests too deep (a recursive schema)")
        target: Any = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise Unsupported(f"$ref {ref!r} at {where or '/'} does not resolve")
        return self.compile(target, where, refs + 1)

    @staticmethod
    def _types(node: Node) -> None:
        kind = node.schema.get("type")
        if kind is None:
            return
        kinds = [kind] if isinstance(kind, str) else kind
        if not isinstance(kinds, list) or not kinds or not all(k in JSON_TYPES for k in kinds):
            raise Unsupported(f"type {kind!r} at {node.pointer or '/'} is not a JSON Schema type")
        node.types = frozenset(kinds)

    @staticmethod
    def _int(value: Any, what: str, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
            raise Unsupported(f"{what} at {where or '/'} is not a non-negative integer")
        return int(value)

    def _strings(self, node: Node) -> None:
        s, where = node.schema, node.pointer
        if "minLength" in s:
            node.min_length = self._int(s["minLength"], "minLength", where)
        if "maxLength" in s:
            node.max_length = self._int(s["maxLength"], "maxLength", where)
        if "pattern" in s:
            try:
                re.compile(s["pattern"])
            except (re.error, TypeError) as exc:
                raise Unsupported(
                    f"pattern {s['pattern']!r} at {where or '/'} cannot be generated ({exc})"
                ) from None
            node.pattern = s["pattern"]
        if "format" in s:
            node.format = s["format"] if isinstance(s["format"], str) else None
            if node.format not in FORMATS:
                self.notes.append(f"format {s['format']!r} at {where or '/'} is treated as an annotation")

    def _numbers(self, node: Node) -> None:
        s, where = node.schema, node.pointer
        for key in ("minimum", "maximum"):
            if key in s:
                if isinstance(s[key], bool) or not isinstance(s[key], int | float):
                    raise Unsupported(f"{key} at {where or '/'} is not a number")
                setattr(node, key, s[key])
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            value = s.get(key)
            if value is None:
                continue
            attr = "exclusive_" + bound
            if isinstance(value, bool):  # draft 4: a flag on minimum/maximum
                if value and getattr(node, bound) is not None:
                    setattr(node, attr, getattr(node, bound))
                    setattr(node, bound, None)
                    node.draft4_exclusive = True
            elif isinstance(value, int | float):
                setattr(node, attr, value)
            else:
                raise Unsupported(f"{key} at {where or '/'} is not a number")
        if "multipleOf" in s:
            m = s["multipleOf"]
            if isinstance(m, bool) or not isinstance(m, int | float) or m <= 0 or m != int(m):
                raise Unsupported(f"multipleOf {m!r} at {where or '/'}: only whole multiples are generated")
            node.multiple_of = int(m)

    def _arrays(self, node: Node, refs: int) -> None:
        s, where = node.schema, node.pointer
        if "items" in s:
            if isinstance(s["items"], list):
                raise Unsupported(f"tuple-form items at {where or '/'} is not supported")
            node.items = self.compile(s["items"], f"{where}/items", refs)
        if "minItems" in s:
            node.min_items = self._int(s["minItems"], "minItems", where)
        if "maxItems" in s:
            node.max_items = self._int(s["maxItems"], "maxItems", where)
        node.unique = s.get("uniqueItems") is True

    def _objects(self, node: Node, refs: int) -> None:
        s, where = node.schema, node.pointer
        props = s.get("properties", {})
        if not isinstance(props, dict):
            raise Unsupported(f"properties at {where or '/'} is not an object")
        node.props = {
            name: self.compile(sub, f"{where}/properties/{name}", refs) for name, sub in props.items()
        }
        required = s.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise Unsupported(f"required at {where or '/'} is not a list of names")
        node.required = tuple(dict.fromkeys(required))
        for name in node.required:
            if name in node.props and node.props[name].never:
                raise Unsupported(f"required property {name!r} at {where or '/'} has a false schema")
        extra = s.get("additionalProperties")
        if extra is False:
            node.additional = False
        elif isinstance(extra, dict):
            node.additional = self.compile(extra, f"{where}/additionalProperties", refs)
        if node.additional is False or (isinstance(node.additional, Node) and node.additional.never):
            node.additional = False
            missing = [r for r in node.required if r not in node.props]
            if missing:
                raise Unsupported(f"required {missing} at {where or '/'} can never be present")


def described(text: str, kinds: frozenset[str]) -> list[Any]:
    """Values a description offers for its place: quoted ones, then the form its placeholders name.

    A quoted value is a string where a string may go, else read as JSON (`'10'` for an integer); the
    caller keeps only what the place's schema admits, so a quote that was prose costs nothing.
    """
    values: list[Any] = []
    for match in QUOTED.finditer(text):
        token = next(g for g in match.groups() if g is not None)
        if not kinds or "string" in kinds:
            values.append(token)
        else:
            try:
                values.append(json.loads(token))
            except ValueError:
                continue
    if not kinds or "string" in kinds:
        values.extend(PLACEHOLDERS[m.group(0)] for m in PLACEHOLDER.finditer(text))
    return values


def _rotate(values: list[Any], rank: int) -> list[Any]:
    """`values` starting at the rank-th: the simplest example of a sampled_from is its first value."""
    shift = rank % len(values)
    return values[shift:] + values[:shift]


# ------------------------------------------------------------------------------------------------ values


def _scalars() -> SearchStrategy[Any]:
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
        _scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=3), st.dictionaries(st.text(TEXT, max_size=6), children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


def _long_text(low: int, high: int) -> SearchStrategy[str]:
    """A string of length low..high built by repeating a short seed: cheap at any length."""
    return st.tuples(st.text(TEXT, min_size=1, max_size=4), st.integers(low, high)).map(
        lambda t: (t[0] * (t[1] // len(t[0]) + 1))[: t[1]]
    )


def _text(low: int, high: int | None) -> SearchStrategy[str]:
    if low > LONG_STRING:
        return _long_text(low, high if high is not None else low + 8)
    return st.text(TEXT, min_size=low, max_size=high)


def _bounds(node: Node, integral: bool) -> tuple[Any, Any, bool, bool]:
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
    low, high, _, _ = _bounds(node, integral=True)
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
    low, high, low_ex, high_ex = _bounds(node, integral=False)
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
        return st.sampled_from(_rotate(node.enum, rank) if rank is not None else node.enum)
    if rank is not None and node.hints:
        return st.one_of(st.sampled_from(_rotate(node.hints, rank)), _plain(node, depth, rank))
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


# --------------------------------------------------------------------------------------------- mutations


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
        options.append(st.lists(_scalars(), max_size=2))
    if "object" not in allowed:
        options.append(st.dictionaries(st.text(TEXT, max_size=5), _scalars(), max_size=2))
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
    return base.filter(lambda v: not any(_same_json(v, x) for x in values))


def _same_json(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _below(node: Node) -> SearchStrategy[Any]:
    integral = node.kinds() <= {"integer"}
    low, _, low_ex, _ = _bounds(node, integral=False)
    edge = math.floor(low) if low_ex else math.ceil(low) - 1
    ints = st.integers(max_value=edge)
    if integral:
        return ints
    return st.one_of(
        ints,
        st.floats(max_value=low, exclude_max=not low_ex, allow_nan=False, allow_infinity=False),
    )


def _above(node: Node) -> SearchStrategy[Any]:
    integral = node.kinds() <= {"integer"}
    _, high, _, high_ex = _bounds(node, integral=False)
    edge = math.ceil(high) if high_ex else math.floor(high) + 1
    ints = st.integers(min_value=edge)
    if integral:
        return ints
    return st.one_of(
        ints,
        st.floats(min_value=high, exclude_min=not high_ex, allow_nan=False, allow_infinity=False),
    )


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
        low, _, low_ex, _ = _bounds(node, integral=False)
        _, high, _, high_ex = _bounds(node, integral=False)
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
        return _long_text(node.max_length + 1, node.max_length + 8), f"longer than {node.max_length}"
    if site.keyword == "minLength":
        return st.text(TEXT, max_size=min(node.min_length - 1, 16)), f"shorter than {node.min_length}"
    if site.keyword in ("minimum", "exclusiveMinimum"):
        return _below(node), "below the minimum"
    if site.keyword in ("maximum", "exclusiveMaximum"):
        return _above(node), "above the maximum"
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


@dataclass(repr=False)
class Model:
    """A tool's inputSchema, compiled, with its validator: the source of valid and invalid arguments."""

    schema: dict[str, Any]
    root: Node
    validator: Any
    notes: list[str]
    _careful: dict[int, SearchStrategy[dict[str, Any]]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return "Model(inputSchema)"

    def is_valid(self, value: Any) -> bool:
        return bool(self.validator.is_valid(value))

    @functools.cached_property
    def _valid(self) -> SearchStrategy[dict[str, Any]]:
        return value_strategy(self.root).filter(self.is_valid)

    def valid(self) -> SearchStrategy[dict[str, Any]]:
        """Arguments valid under the schema, checked by the validator before they are used."""
        return self._valid

    def careful(self, rank: int = 0) -> SearchStrategy[dict[str, Any]]:
        """Valid arguments whose simplest example is what a careful client would send (see the module
        docstring); each rank rotates the schema's hints by one, for a different candidate."""
        if rank not in self._careful:
            self._careful[rank] = value_strategy(self.root, rank=rank).filter(self.is_valid)
        return self._careful[rank]

    def breakable(self) -> bool:
        """Whether the schema has any rule a value could break (else there is no invalid input to send)."""
        return _has_rules(self.root)

    def invalid(self) -> SearchStrategy[Mutation]:
        """Arguments with exactly one rule broken: a valid value, then one site changed or removed."""

        @st.composite
        def mutate(draw: st.DrawFn) -> Mutation:
            value = draw(self.valid())
            found = sites(self.root, value)
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
                mutated = _place(value, site.path, {**holder_value, key: draw(_scalars())})
                detail = f"extra property {key!r}"
            else:
                strategy, detail = _breaker(site, value)
                mutated = _place(value, site.path, draw(strategy))
            assume(self.breaks_only(mutated, site.keyword))
            return Mutation(mutated, site.keyword, pointer(site.path), detail)

        return mutate()

    def breaks_only(self, value: Any, keyword: str) -> bool:
        """Whether `value` is invalid, and every error the validator finds is about `keyword`."""
        errors = list(self.validator.iter_errors(value))
        return bool(errors) and all(e.validator == keyword for e in errors)


def _has_rules(node: Node) -> bool:
    if node.enum is not None or node.required or node.additional is False:
        return True
    if node.max_length is not None or node.min_length or node.minimum is not None:
        return True
    if node.maximum is not None or node.exclusive_minimum is not None or node.exclusive_maximum is not None:
        return True
    if node.types is not None and node.pointer:
        return True
    return any(_has_rules(p) for p in node.props.values()) or (
        node.items is not None and _has_rules(node.items)
    )


def build(schema: Any) -> Model:
    """Compile a tool's inputSchema; raise Unsupported (with the reason) when it cannot be honoured."""
    if not isinstance(schema, dict):
        raise Unsupported("inputSchema is not an object")
    dialect = schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")
    cls = validators.validator_for({"$schema": dialect}, default=None) if isinstance(dialect, str) else None
    if cls is None:
        raise Unsupported(f"inputSchema declares an unknown dialect {dialect!r}")
    exc = schema_error(cls, schema)
    if exc is not None:
        if exc.validator == "format" and exc.validator_value == "regex":
            # Valid ECMA-262 perhaps (\p{L}), but neither hypothesis nor the validator can run it here.
            raise Unsupported(
                f"pattern {exc.instance!r} is not a regular expression Python can run: no input can be "
                "generated or checked against it"
            ) from None
        raise Unsupported(f"inputSchema is not a valid JSON Schema: {exc.message[:160]}") from None
    validator = cls(schema)
    compiler = Compiler(schema, validator)
    root = compiler.compile(schema, "")
    if root.never or (root.types is not None and "object" not in root.types):
        raise Unsupported("inputSchema admits no object")
    # Tool arguments are an object (CallToolRequest says so): generate objects even when `type` is unsaid.
    root.types = frozenset({"object"})
    model = Model(schema, root, validator, compiler.notes)
    model.valid()  # builds every strategy now, so a schema nested too deep is refused here
    return model
