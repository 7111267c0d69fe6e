"""Tool arguments from a tool's inputSchema: the `Model` every user of them holds, and `build`.

A model joins the three jobs, each in its own module: the compiler (`compiler.py`: the schema as nodes,
or `Unsupported` with the reason), generation (`generate.py`: valid values, and the careful arguments
a client would send, for the base pack), and mutation (`mutate.py`: values with exactly one rule
broken, for the fuzz pack).

Every value is checked with a JSON Schema validator of the schema's own dialect before it is used: a
"valid" input is valid, and an "invalid" one fails on exactly the named keyword and nothing else. A gap
in the converter therefore costs examples, never a false verdict.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from hypothesis.strategies import SearchStrategy
from jsonschema import validators

from conformance.arguments import mutate
from conformance.arguments.compiler import Compiler, Node, Unsupported, described
from conformance.arguments.generate import json_values, value_strategy
from conformance.arguments.mutate import Mutation
from conformance.schemas.compiled import schema_error

__all__ = ["Model", "Mutation", "Node", "Unsupported", "build", "described", "json_values", "value_strategy"]


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
        return mutate.has_rules(self.root)

    def invalid(self) -> SearchStrategy[Mutation]:
        """Arguments with exactly one rule broken: a valid value, then one site changed or removed."""
        return mutate.invalid(self.valid(), self.root, self.breaks_only)

    def breaks_only(self, value: Any, keyword: str) -> bool:
        """Whether `value` is invalid, and every error the validator finds is about `keyword`."""
        errors = list(self.validator.iter_errors(value))
        return bool(errors) and all(e.validator == keyword for e in errors)


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
