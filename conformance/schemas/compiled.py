"""Compile a JSON Schema (draft 2020-12) into a plain predicate: is this instance valid, yes or no.

Why: jsonschema's validator interprets the schema on every call, re-resolving each `$ref` and
`$dynamicRef` through `referencing` and building an error object per descent. That is right for
explaining a failure and slow for confirming success: checking one tool's inputSchema against the
2020-12 metaschema costs about 0.6 ms, so a server with 5,000 tools spends seconds on it. Here the
schema is walked once; every reference is resolved at compile time and every keyword becomes a
closure, so a valid instance costs microseconds.

The predicate only answers yes or no. Callers keep jsonschema as the explanation: when the predicate
says no, they run jsonschema to get its message and path (see `FastValidator`). So a verdict's
wording never changes, and the only thing this module must get right is the yes/no answer, which
tests/schemas/test_compiled_schema.py checks against jsonschema with hypothesis on generated schemas and
instances.

Only the keywords whose semantics are written out below compile. Any other keyword (an unknown one
included, which jsonschema would ignore) raises `Unsupported`, and callers fall back to jsonschema
for that schema, so a schema this module does not fully understand is never judged by it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, SchemaError
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

Predicate = Callable[[Any], bool]
#: A `referencing` resolver (its class is not exported, so it is named here for readers only).
Resolver = Any

#: Keywords that never affect validity in 2020-12 (annotations, identifiers, containers of other
#: schemas reached only through `$ref`). `$schema` is honoured by the caller choosing this module.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
        "$vocabulary",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
    }
)


class Unsupported(Exception):
    """The schema uses something this compiler does not implement; validate it with jsonschema."""


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


#: Draft 2020-12 types as jsonschema's type checker defines them (an integral float is an integer).
_TYPES: dict[str, Predicate] = {
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "null": lambda v: v is None,
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "string": lambda v: isinstance(v, str),
}


def json_equal(one: Any, two: Any) -> bool:
    """JSON equality: booleans differ from numbers, 1 equals 1.0, containers compare member-wise."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return bool(one == two)


def _unique(items: list[Any]) -> bool:
    if all(isinstance(item, str) for item in items):
        return len(set(items)) == len(items)
    return not any(json_equal(items[i], items[j]) for i in range(len(items)) for j in range(i))


#: Every keyword with a validity rule here, and the method that compiles it (spelled out, so that an
#: unknown keyword such as `ref` or `$type` can never be mistaken for `$ref` or `type`).
_COMPILED = {
    keyword: "_kw_" + keyword.lstrip("$")
    for keyword in (
        "$ref", "$dynamicRef", "type", "enum", "const", "allOf", "anyOf", "oneOf", "not",
        "properties", "additionalProperties", "required", "minProperties", "maxProperties",
        "propertyNames", "items", "minItems", "maxItems", "uniqueItems", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "format",
    )
}  # fmt: skip


class _Compiler:
    def __init__(self, registry: Registry, format_checker: FormatChecker | None) -> None:
        self.registry = registry
        self.format_checker = format_checker
        self.done: dict[int, list[Predicate]] = {}
        self.root: list[Predicate] | None = None
        self.root_anchor: str | None = None

    def compile(self, schema: Any, resolver: Resolver) -> Predicate:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"a schema must be an object or a boolean, not {type(schema).__name__}")
        if isinstance(schema.get("$id"), str):
            resolver = resolver.in_subresource(DRAFT202012.create_resource(schema))
        # One dict object sits in one schema resource, so its identity fixes its base URI too.
        key = id(schema)
        seen = self.done.get(key)
        if seen is not None:  # compiled, or being compiled: a cycle, so defer to the finished cell
            return lambda value: seen[0](value)
        cell: list[Predicate] = [_never]
        self.done[key] = cell
        cell[0] = self._keywords(schema, resolver)
        return cell[0]

    def _keywords(self, schema: dict[str, Any], resolver: Resolver) -> Predicate:
        checks: list[Predicate] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS:
                continue
            name = _COMPILED.get(keyword)
            build = getattr(self, name, None) if name else None
            if build is None:
                raise Unsupported(f"keyword {keyword!r} is not compiled")
            check = build(value, schema, resolver)
            if check is not None:
                checks.append(check)
        if not checks:
            return _always
        if len(checks) == 1:
            return checks[0]
        all_checks = tuple(checks)
        return lambda value: all(check(value) for check in all_checks)

    # -- references ----------------------------------------------------------------------------

    def _kw_ref(self, ref: Any, _: Any, resolver: Resolver) -> Predicate:
        resolved = self._lookup(resolver, ref)
        return self.compile(resolved.contents, resolved.resolver)

    @staticmethod
    def _lookup(resolver: Resolver, ref: Any) -> Any:
        if not isinstance(ref, str):
            raise Unsupported(f"reference {ref!r} is not a string")
        try:
            return resolver.lookup(ref)
        except Unresolvable as exc:
            # jsonschema raises the same while validating; it is its error to report, not ours.
            raise Unsupported(f"reference {ref!r} does not resolve") from exc

    def _kw_dynamicRef(self, ref: Any, _: Any, resolver: Resolver) -> Predicate:
        # Compiled from the entry schema, the outermost dynamic scope is that schema: a dynamic
        # reference to the anchor it declares resolves to it (as every metaschema vocabulary's
        # `"$dynamicRef": "#meta"` does). Anything else needs the runtime dynamic scope.
        target = self._lookup(resolver, ref).contents
        name = ref.partition("#")[2]
        anchored = isinstance(target, dict) and target.get("$dynamicAnchor") == name
        if self.root is None or name != self.root_anchor or not anchored:
            raise Unsupported(f"$dynamicRef {ref!r} does not resolve to the entry schema")
        root = self.root
        return lambda value: root[0](value)

    # -- any instance --------------------------------------------------------------------------

    def _kw_type(self, types: Any, *_: Any) -> Predicate:
        names = [types] if isinstance(types, str) else types
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            raise Unsupported(f"type {types!r}")
        tests = tuple(_TYPES[n] for n in names)
        if len(tests) == 1:
            return tests[0]
        return lambda value: any(test(value) for test in tests)

    def _kw_enum(self, options: Any, *_: Any) -> Predicate:
        if not isinstance(options, list):
            raise Unsupported("enum is not an array")
        if all(isinstance(o, str) for o in options):
            strings = frozenset(options)
            return lambda value: isinstance(value, str) and value in strings
        return lambda value: any(json_equal(value, option) for option in options)

    def _kw_const(self, const: Any, *_: Any) -> Predicate:
        return lambda value: json_equal(value, const)

    def _kw_allOf(self, schemas: Any, _: Any, resolver: Resolver) -> Predicate:
        parts = tuple(self.compile(s, resolver) for s in self._schema_list(schemas, "allOf"))
        return lambda value: all(part(value) for part in parts)

    def _kw_anyOf(self, schemas: Any, _: Any, resolver: Resolver) -> Predicate:
        parts = tuple(self.compile(s, resolver) for s in self._schema_list(schemas, "anyOf"))
        return lambda value: any(part(value) for part in parts)

    def _kw_oneOf(self, schemas: Any, _: Any, resolver: Resolver) -> Predicate:
        parts = tuple(self.compile(s, resolver) for s in self._schema_list(schemas, "oneOf"))
        return lambda value: sum(1 for part in parts if part(value)) == 1

    def _kw_not(self, schema: Any, _: Any, resolver: Resolver) -> Predicate:
        part = self.compile(schema, resolver)
        return lambda value: not part(value)

    @staticmethod
    def _schema_list(schemas: Any, keyword: str) -> list[Any]:
        if not isinstance(schemas, list) or not schemas:
            raise Unsupported(f"{keyword} is not a non-empty array")
        return schemas

    # -- objects -------------------------------------------------------------------------------

    def _kw_properties(self, properties: Any, _: Any, resolver: Resolver) -> Predicate:
        if not isinstance(properties, dict):
            raise Unsupported("properties is not an object")
        compiled = {name: self.compile(s, resolver) for name, s in properties.items()}

        def check(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for name, member in value.items():
                test = compiled.get(name)
                if test is not None and not test(member):
                    return False
            return True

        return check

    def _kw_additionalProperties(self, schema: Any, parent: dict[str, Any], resolver: Resolver) -> Predicate:
        if "patternProperties" in parent:
            raise Unsupported("additionalProperties beside patternProperties")
        known = frozenset(parent.get("properties", {}))
        test = self.compile(schema, resolver)

        def check(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            return all(test(member) for name, member in value.items() if name not in known)

        return check

    def _kw_required(self, names: Any, *_: Any) -> Predicate:
        if not isinstance(names, list):
            raise Unsupported("required is not an array")
        wanted = tuple(names)
        return lambda value: not isinstance(value, dict) or all(n in value for n in wanted)

    def _kw_minProperties(self, minimum: Any, *_: Any) -> Predicate:
        bound = self._count(minimum, "minProperties")
        return lambda value: not isinstance(value, dict) or len(value) >= bound

    def _kw_maxProperties(self, maximum: Any, *_: Any) -> Predicate:
        bound = self._count(maximum, "maxProperties")
        return lambda value: not isinstance(value, dict) or len(value) <= bound

    def _kw_propertyNames(self, schema: Any, _: Any, resolver: Resolver) -> Predicate:
        test = self.compile(schema, resolver)
        return lambda value: not isinstance(value, dict) or all(test(name) for name in value)

    # -- arrays --------------------------------------------------------------------------------

    def _kw_items(self, schema: Any, parent: dict[str, Any], resolver: Resolver) -> Predicate:
        if "prefixItems" in parent:
            raise Unsupported("items beside prefixItems")
        test = self.compile(schema, resolver)
        return lambda value: not isinstance(value, list) or all(test(item) for item in value)

    def _kw_minItems(self, minimum: Any, *_: Any) -> Predicate:
        bound = self._count(minimum, "minItems")
        return lambda value: not isinstance(value, list) or len(value) >= bound

    def _kw_maxItems(self, maximum: Any, *_: Any) -> Predicate:
        bound = self._count(maximum, "maxItems")
        return lambda value: not isinstance(value, list) or len(value) <= bound

    def _kw_uniqueItems(self, unique: Any, *_: Any) -> Predicate | None:
        if unique is not True:
            if unique is False:
                return None
            raise Unsupported("uniqueItems is not a boolean")
        return lambda value: not isinstance(value, list) or _unique(value)

    @staticmethod
    def _count(bound: Any, keyword: str) -> int:
        if not _TYPES["integer"](bound) or bound < 0:
            raise Unsupported(f"{keyword} is not a non-negative integer")
        return int(bound)

    # -- numbers and strings -------------------------------------------------------------------

    def _kw_minimum(self, bound: Any, *_: Any) -> Predicate:
        if not _is_number(bound):
            raise Unsupported("minimum is not a number")
        return lambda value: not _is_number(value) or value >= bound

    def _kw_exclusiveMinimum(self, bound: Any, *_: Any) -> Predicate:
        if not _is_number(bound):
            raise Unsupported("exclusiveMinimum is not a number")
        return lambda value: not _is_number(value) or value > bound

    def _kw_maximum(self, bound: Any, *_: Any) -> Predicate:
        if not _is_number(bound):
            raise Unsupported("maximum is not a number")
        return lambda value: not _is_number(value) or value <= bound

    def _kw_exclusiveMaximum(self, bound: Any, *_: Any) -> Predicate:
        if not _is_number(bound):
            raise Unsupported("exclusiveMaximum is not a number")
        return lambda value: not _is_number(value) or value < bound

    def _kw_minLength(self, minimum: Any, *_: Any) -> Predicate:
        bound = self._count(minimum, "minLength")  # code points, as Python's len counts them
        return lambda value: not isinstance(value, str) or len(value) >= bound

    def _kw_maxLength(self, maximum: Any, *_: Any) -> Predicate:
        bound = self._count(maximum, "maxLength")
        return lambda value: not isinstance(value, str) or len(value) <= bound

    def _kw_pattern(self, pattern: Any, *_: Any) -> Predicate:
        # jsonschema's own reading (Python `re.search`), so both agree on every instance.
        if not isinstance(pattern, str):
            raise Unsupported("pattern is not a string")
        search = re.compile(pattern).search
        return lambda value: not isinstance(value, str) or search(value) is not None

    def _kw_format(self, name: Any, *_: Any) -> Predicate | None:
        checker = self.format_checker
        if checker is None or name not in checker.checkers:
            return None
        return lambda value: checker.conforms(value, name)


def compile_schema(
    schema: Any,
    registry: Registry | None = None,
    format_checker: FormatChecker | None = None,
) -> Predicate:
    """A predicate equal to `Draft202012Validator(schema, ...).is_valid`, or raise `Unsupported`."""
    compiler = _Compiler(registry or Registry(), format_checker)
    if not isinstance(schema, dict):
        return compiler.compile(schema, None)
    # As jsonschema does: the schema is the root resource, so `#/$defs/...` resolves inside it.
    resolver = compiler.registry.resolver_with_root(DRAFT202012.create_resource(schema))
    root: list[Predicate] = [_never]
    compiler.root = root
    anchor = schema.get("$dynamicAnchor")
    compiler.root_anchor = anchor if isinstance(anchor, str) else None
    root[0] = compiler.compile(schema, resolver)
    return root[0]


class FastValidator:
    """A jsonschema validator whose success path is compiled: `iter_errors` is only walked on failure.

    Behaves as `Draft202012Validator(schema, registry=..., format_checker=...)` for `is_valid` and
    `iter_errors`; a schema the compiler cannot take is validated by jsonschema alone.
    """

    def __init__(
        self,
        schema: Any,
        registry: Registry | None = None,
        format_checker: FormatChecker | None = None,
    ) -> None:
        self.slow = Draft202012Validator(
            schema, registry=registry or Registry(), format_checker=format_checker
        )
        self.fast: Predicate | None
        try:
            self.fast = compile_schema(schema, registry, format_checker)
        except (Unsupported, re.error):
            self.fast = None

    def is_valid(self, instance: Any) -> bool:
        return self.fast(instance) if self.fast is not None else self.slow.is_valid(instance)

    def iter_errors(self, instance: Any) -> Any:
        if self.fast is not None and self.fast(instance):
            return iter(())
        return self.slow.iter_errors(instance)


def metaschema_check(cls: type[Validator]) -> Predicate | None:
    """The compiled metaschema of a validator class (with its format checking), or None.

    jsonschema's `check_schema` validates with the metaschema's own validator class and that class's
    FORMAT_CHECKER (`regex`, `uri`, `uri-reference` are asserted); so does this predicate. Only the
    2020-12 metaschema is compiled: the others are rarely declared by tool schemas.
    """
    return _draft202012_metaschema() if cls is Draft202012Validator else None


@cache
def _draft202012_metaschema() -> Predicate | None:
    return compile_2020_12_metaschema(Draft202012Validator.FORMAT_CHECKER)


def compile_2020_12_metaschema(format_checker: FormatChecker) -> Predicate | None:
    """The 2020-12 metaschema (from jsonschema's own offline registry) compiled with `format_checker`,
    or None should a future metaschema use a keyword this compiler does not know. Callers cache it."""
    from jsonschema_specifications import REGISTRY

    meta = REGISTRY.contents(Draft202012Validator.META_SCHEMA["$id"])
    try:
        return compile_schema(meta, REGISTRY, format_checker)
    except Unsupported:
        return None


def schema_error(cls: type[Validator], schema: Any) -> SchemaError | None:
    """What `cls.check_schema(schema)` raises, or None; a valid 2020-12 schema is confirmed compiled."""
    fast = metaschema_check(cls)
    if fast is not None and fast(schema):
        return None
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return exc
    return None
