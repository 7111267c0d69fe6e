"""Mutants of the official-fixture reference server (FIXTURE-*).

Each `--defect NAME` plants one fault in a `conformance_reference.fixture_tools.Fixture` method; `none`
is the reference, and `no-fixture` (a server offering none of the fixture's tools) is conformant too:
every row SKIPs on it, nothing sent.

    python -m tests.servers.official_fixture_mutants --defect NAME [--http --port 0]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import mcp_types as types
from mcp.server.subscriptions import PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPError

from conformance_reference import fixture_server
from conformance_reference.fixture_tools import Fixture, done, form, text
from conformance_reference.handlers import JSON

DEFECTS = {
    "none": "conformant",
    "no-fixture": "conformant: offers none of the official fixture's tools or prompts",
    "prompt-only": "offers the fixture's prompt but none of its tools (under other names)",
    "text-no-text": "test_simple_text's text block has no text member",
    "image-no-mime-type": "test_image_content's image block has no mimeType",
    "audio-no-data": "test_audio_content's audio block has no data",
    "audio-mp3": "test_audio_content's audio is audio/mpeg, not the fixture's audio/wav (schema-valid)",
    "embedded-no-resource": "test_embedded_resource's resource block has no resource",
    "mixed-no-uri": "test_multiple_content_types' embedded resource has no uri",
    "error-as-protocol-error": "test_error_handling fails with a JSON-RPC error, not an isError result",
    "logs-twice": "test_tool_with_logging sends two log messages, not three",
    "schema-stripped": "json_schema_2020_12_tool is listed without its $schema",
    "header-integer": "test_custom_header's x-mcp-header parameter is an integer",
    "defaults-missing": "the SEP-1034 form's name has no default",
    "enums-no-legacy": "the SEP-1330 form's legacyEnum has no enumNames",
    "never-completes": "test_input_required_result_elicitation asks again instead of completing",
    "no-request-state": "test_input_required_result_request_state's InputRequiredResult has no requestState",
    "same-request-state": "multi_round's second InputRequiredResult repeats the first one's requestState",
    "capability-ignored": "test_missing_capability runs for a client that declared no sampling",
    "tools-change-unannounced": "test_trigger_tool_change announces a prompt list change instead",
    "prompts-change-unannounced": "test_trigger_prompt_change announces a tool list change instead",
    "no-reconnection": "the 2025-11-25 fixture does not offer test_reconnection",
    "capability-http-200": "the -32021 error comes with HTTP 200 (2026-07-28 over HTTP)",
}


class Mutant(Fixture):
    """The reference fixture with the one defect `defect` names."""

    def __init__(self, defect: str) -> None:
        self.defect = defect

    def prompt_name(self) -> str:
        return "other_prompt" if self.defect == "no-fixture" else super().prompt_name()

    def simple_text(self) -> JSON:
        return done({"type": "text"}) if self.defect == "text-no-text" else super().simple_text()

    def image(self) -> JSON:
        if self.defect == "image-no-mime-type":
            return done({"type": "image", "data": "iVBORw0KGgo="})
        return super().image()

    def audio(self) -> JSON:
        result = super().audio()
        block = result["content"][0]
        if self.defect == "audio-no-data":
            del block["data"]
        elif self.defect == "audio-mp3":
            block["mimeType"] = "audio/mpeg"
        return result

    def embedded(self) -> JSON:
        return done({"type": "resource"}) if self.defect == "embedded-no-resource" else super().embedded()

    def mixed(self) -> JSON:
        result = super().mixed()
        if self.defect == "mixed-no-uri":
            del result["content"][2]["resource"]["uri"]
        return result

    def error(self) -> JSON:
        if self.defect == "error-as-protocol-error":
            raise MCPError(code=types.INTERNAL_ERROR, message="The tool failed.")
        return super().error()

    def log_lines(self) -> list[str]:
        return super().log_lines()[:2] if self.defect == "logs-twice" else super().log_lines()

    def schema_2020_12(self) -> JSON:
        schema = super().schema_2020_12()
        if self.defect == "schema-stripped":
            del schema["$schema"]
        return schema

    def header_schema(self) -> JSON:
        schema = super().header_schema()
        if self.defect == "header-integer":
            schema["properties"]["region"]["type"] = "integer"
        return schema

    def defaults_form(self) -> JSON:
        asked = super().defaults_form()
        if self.defect == "defaults-missing":
            del asked["params"]["requestedSchema"]["properties"]["name"]["default"]
        return asked

    def enums_form(self) -> JSON:
        asked = super().enums_form()
        if self.defect == "enums-no-legacy":
            del asked["params"]["requestedSchema"]["properties"]["legacyEnum"]["enumNames"]
        return asked

    def rounds(self, name: str) -> list[tuple[dict[str, JSON], str | None]]:
        rounds = super().rounds(name)
        if self.defect == "no-request-state" and name.endswith("request_state"):
            return [(asks, None) for asks, _ in rounds]
        if self.defect == "same-request-state" and name.endswith("multi_round"):
            return [(asks, rounds[0][1]) for asks, _ in rounds]
        return rounds

    def completed(self, name: str, state: str | None) -> JSON:
        if self.defect == "never-completes" and name.endswith("_elicitation"):
            again = form("What is your name?", {"name": {"type": "string"}}, ["name"])
            return {"resultType": "input_required", "inputRequests": {"user_name": again}}
        return super().completed(name, state)

    def announced(self, event: Any) -> Any:
        if self.defect == "tools-change-unannounced" and isinstance(event, ToolsListChanged):
            return PromptsListChanged()
        if self.defect == "prompts-change-unannounced" and isinstance(event, PromptsListChanged):
            return ToolsListChanged()
        return super().announced(event)

    def missing(self, needed: str) -> MCPError:
        if self.defect == "capability-ignored" and needed == "sampling":
            raise _Ran()
        return super().missing(needed)


class _Ran(Exception):
    """Raised in place of -32021 by the capability-ignored mutant: the call then runs (`_called`)."""


def _renamed(tools: list[types.Tool]) -> list[types.Tool]:
    return [t.model_copy(update={"name": f"other_{t.name}"}) for t in tools]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--defect", choices=sorted(DEFECTS), required=True)
    known, rest = parser.parse_known_args(argv)
    defect = known.defect
    if defect in ("no-fixture", "prompt-only"):
        fixture_server.tools_for = _wrap_renamed(fixture_server.tools_for)
    if defect == "no-reconnection":
        fixture_server.tools_for = _wrap_dropped(fixture_server.tools_for, fixture_server.RECONNECT_TOOL)
    if defect == "capability-ignored":
        fixture_server.called = _wrap_ran(fixture_server.called)
    if defect == "capability-http-200":
        from mcp.server import _streamable_http_modern as modern

        modern.ERROR_CODE_HTTP_STATUS = {
            k: v for k, v in modern.ERROR_CODE_HTTP_STATUS.items() if k != -32021
        }
    return fixture_server.main(rest, Mutant(defect))


def _wrap_renamed(tools_for: Any) -> Any:
    return lambda fixture, modern: _renamed(tools_for(fixture, modern))


def _wrap_dropped(tools_for: Any, name: str) -> Any:
    return lambda fixture, modern: [t for t in tools_for(fixture, modern) if t.name != name]


def _wrap_ran(called: Any) -> Any:
    async def wrapped(fixture: Fixture, ctx: Any, params: types.CallToolRequestParams, minimum: str) -> JSON:
        try:
            return await called(fixture, ctx, params, minimum)
        except _Ran:
            return done(text(f"{params.name} ran without the capability it needs."))

    return wrapped


if __name__ == "__main__":
    sys.exit(main())
