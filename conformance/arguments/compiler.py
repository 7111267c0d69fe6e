"""The compiler of a tool's inputSchema: one `Node` per subschema, saying what a value there may be.

Why a compiler of our own: the fuzz pack must know *which* rule an invalid input breaks, to name it when
a server accepts it, and must refuse schemas it cannot honour rather than send wrong data. So it covers
the common keywords (type, properties, required, additionalProperties, enum, const, string lengths and
pattern, number bounds, arrays, nested objects, anyOf/oneOf, local `$ref`), and a schema with any other
validation keyword raises `Unsupported`: the tool is skipped, with the reason. Generation
(`generate.py`) and mutation (`mutate.py`) both read the nodes it builds; `strategies.build` runs it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

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
            if not any(same_json(value, h) for h in hints) and self._admits(s, value):
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


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not 1, as Python's `True == 1` would have it."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)
