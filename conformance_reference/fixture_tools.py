"""The official-fixture reference's tools and their answers (`Fixture`), apart from the serving
(`fixture_server`), so that a mutant overrides one method to plant one defect.

Written from the official conformance suite's scenario descriptions (what each fixture tool returns or
asks), not from its code; the texts are this repository's own.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any, Final

from mcp.shared.exceptions import MCPError

from conformance_reference.handlers import JSON, object_schema

__all__ = ["NEEDS", "Fixture", "done", "text"]

MISSING_CAPABILITY: Final = -32021


def _png() -> str:
    """A 1x1 red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + body).decode()


def _wav() -> str:
    """Eight samples of 8 kHz 8-bit mono silence, base64."""
    samples = b"\x80" * 8
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    riff = (
        b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    )
    return base64.b64encode(b"RIFF" + struct.pack("<I", len(riff)) + riff).decode()


PNG: Final = _png()
WAV: Final = _wav()
#: The 2020-12 tool's inputSchema: every keyword the official scenario looks for.
SCHEMA_2020_12: Final[JSON] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def text(value: str) -> JSON:
    return {"type": "text", "text": value}


def done(*content: JSON, error: bool = False) -> JSON:
    """A CallToolResult in wire form."""
    return {"content": list(content), **({"isError": True} if error else {})}


def ask(method: str, params: JSON) -> JSON:
    return {"method": method, "params": params}


def form(message: str, properties: JSON, required: Sequence[str] = ()) -> JSON:
    schema: JSON = {
        "type": "object",
        "properties": properties,
        **({"required": list(required)} if required else {}),
    }
    return ask("elicitation/create", {"message": message, "requestedSchema": schema})


SAMPLE: Final = ask(
    "sampling/createMessage",
    {"messages": [{"role": "user", "content": text("What is the capital of France?")}], "maxTokens": 100},
)
ROOTS: Final = ask("roots/list", {})
#: Which client capability each input method needs (2026-07-28 clientCapabilities).
NEEDS: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


class Fixture:
    """The fixture's tools and their answers. A mutant subclasses it and overrides one method."""

    # ------------------------------------------------------------------ content

    def simple_text(self) -> JSON:
        return done(text("This is a simple text response for testing."))

    def image(self) -> JSON:
        return done({"type": "image", "data": PNG, "mimeType": "image/png"})

    def audio(self) -> JSON:
        return done({"type": "audio", "data": WAV, "mimeType": "audio/wav"})

    def embedded(self) -> JSON:
        resource = {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "An embedded resource.",
        }
        return done({"type": "resource", "resource": resource})

    def mixed(self) -> JSON:
        resource = {
            "uri": "test://mixed",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        }
        return done(
            text("Several content types:"),
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": resource},
        )

    def error(self) -> JSON:
        return done(text("This tool fails on purpose, to show how a tool reports its failure."), error=True)

    def log_lines(self) -> list[str]:
        return ["Tool execution started", "Tool processing data", "Tool execution completed"]

    # ------------------------------------------------------------------ listed

    def schema_2020_12(self) -> JSON:
        return json.loads(json.dumps(SCHEMA_2020_12))

    def header_schema(self) -> JSON:
        return object_schema({"region": {"type": "string", "x-mcp-header": "Region"}})

    # ------------------------------------------------------------------ 2025-11-25 forms

    def defaults_form(self) -> JSON:
        return form(
            "Please review your details; each field has a default.",
            {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": True},
            },
        )

    def enums_form(self) -> JSON:
        titled = [{"const": f"value{i}", "title": t} for i, t in enumerate(("First", "Second", "Third"), 1)]
        return form(
            "Please choose from each kind of list.",
            {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": titled},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2"]},
                },
                "titledMulti": {"type": "array", "items": {"anyOf": titled}},
            },
        )

    # ------------------------------------------------------------------ 2026-07-28 rounds

    def rounds(self, name: str) -> list[tuple[dict[str, JSON], str | None]]:
        """The input each round of `name` asks (key -> request) and the requestState it carries; the
        result follows the last round."""
        name_form = form("What is your name?", {"name": {"type": "string"}}, ["name"])
        table: dict[str, list[tuple[dict[str, JSON], str | None]]] = {
            "test_input_required_result_elicitation": [({"user_name": name_form}, None)],
            "test_input_required_result_sampling": [({"capital_question": SAMPLE}, None)],
            "test_input_required_result_list_roots": [({"client_roots": ROOTS}, None)],
            "test_input_required_result_request_state": [
                ({"confirm": form("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])}, "request-state:1")
            ],
            "test_input_required_result_multiple_inputs": [
                ({"user_name": name_form, "greeting": SAMPLE, "client_roots": ROOTS}, "multiple:1")
            ],
            "test_input_required_result_multi_round": [
                ({"step1": form("Step 1: your name?", {"name": {"type": "string"}}, ["name"])}, "multi:1"),
                (
                    {"step2": form("Step 2: your colour?", {"color": {"type": "string"}}, ["color"])},
                    "multi:2",
                ),
            ],
        }
        return table[name]

    def completed(self, name: str, state: str | None) -> JSON:
        said = "state-ok: " if state else ""
        return done(text(f"{said}{name} completed with the input given."))

    def prompt_name(self) -> str:
        return "test_simple_prompt"

    def announced(self, event: Any) -> Any:
        """The event a trigger publishes to the listen streams."""
        return event

    def missing(self, needed: str) -> MCPError:
        return MCPError(
            code=MISSING_CAPABILITY,
            message=f"Missing required client capability: {needed}",
            data={"requiredCapabilities": {needed: {}}},
        )
