"""Mutants of the reference Durable Workflow MCP server, each with exactly one planted defect.

Each defect overrides one method of `DwReference`; everything else is the reference. The project's
tests run the dw-discovery suite against each and assert the exact set of non-PASS verdicts, so a
check that misses its defect, or fires on another's, shows.

    python -m tests.servers.dw_mutants --defect NAME [--http] [--preview-limit N]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from conformance_reference.dw_server import DwReference, DwTool, main

JSON = dict[str, Any]


def _retool(tools: list[DwTool], which: str, **changes: Any) -> list[DwTool]:
    return [replace(t, **changes) if t.name == which else t for t in tools]


@dataclass
class NoSchema(DwReference):
    """The document lacks its `schema` member."""

    def document(self) -> JSON:
        doc = super().document()
        del doc["schema"]
        return doc


@dataclass
class WrongSchema(DwReference):
    """The document's `schema` marker is a near miss (the plural-looking id): found by its resource's
    well-known name, it must be judged and fail the marker row alone."""

    def document(self) -> JSON:
        return {**super().document(), "schema": "durable-workflow.v2.mcp-discoveries"}


@dataclass
class SurfaceToolOnly(DwReference):
    """No discovery resource, and the document comes only from a `describe_mcp_surface` tool, without
    its `schema` marker: the well-known tool name is how a client finds it."""

    def tools(self) -> list[DwTool]:
        return _retool(super().tools(), "get_mcp_discovery", name="describe_mcp_surface")

    def document(self) -> JSON:
        doc = super().document()
        del doc["schema"]
        return doc

    def resources(self) -> list[Any]:
        return [r for r in super().resources() if "discovery" not in str(r[0].uri)]


@dataclass
class NoDocument(DwReference):
    """The server shows no discovery document at all (neither resource nor tool)."""

    def tools(self) -> list[DwTool]:
        return [t for t in super().tools() if t.name != "get_mcp_discovery"]

    def resources(self) -> list[Any]:
        return [r for r in super().resources() if "discovery" not in str(r[0].uri)]


@dataclass
class BadToolName(DwReference):
    """A tool (documented and live alike) is named with a '/', outside the seed's pattern."""

    def tools(self) -> list[DwTool]:
        return _retool(super().tools(), "get_workflow_result", name="get_workflow/result")


@dataclass
class GhostTool(DwReference):
    """The document lists a tool that tools/list does not."""

    def document(self) -> JSON:
        doc = super().document()
        doc["tools"].append(
            {"name": "cancel_workflow", "input_schema": {"type": "object"}, "output_schema": None}
        )
        return doc


@dataclass
class UndocumentedTool(DwReference):
    """tools/list has a tool the document leaves out."""

    def listed_tools(self) -> list[Any]:
        import mcp_types as types

        extra = types.Tool(
            name="ping",
            description="Answer with pong.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=True),
        )
        return [*super().listed_tools(), extra]


@dataclass
class SchemaDrift(DwReference):
    """The document's input schema of get_workflow_history no longer matches the live one."""

    def tools(self) -> list[DwTool]:
        tools = super().tools()
        history = next(t for t in tools if t.name == "get_workflow_history")
        documented = {**history.input_schema, "required": ["run_id"]}
        return _retool(tools, "get_workflow_history", documented_schema=documented)


@dataclass
class PreviewOverLimit(DwReference):
    """Previews are cut at twice the limit (on a character boundary; the flag still follows the size)."""

    def preview(self, encoded: str) -> JSON:
        out = super().preview(encoded)
        text = encoded.encode("utf-8")[: 2 * self.preview_limit].decode("utf-8", "ignore")
        out.update(preview=text, preview_bytes=len(text.encode("utf-8")))
        return out


@dataclass
class PreviewMidChar(DwReference):
    """A byte cut decoded with errors="replace": a split character becomes U+FFFD (3 bytes)."""

    def preview(self, encoded: str) -> JSON:
        out = super().preview(encoded)
        text = encoded.encode("utf-8")[: self.preview_limit].decode("utf-8", "replace")
        out.update(preview=text, preview_bytes=len(text.encode("utf-8")))
        return out


@dataclass
class TruncatedFalse(DwReference):
    """`truncated` is false even on a cut preview."""

    def preview(self, encoded: str) -> JSON:
        return {**super().preview(encoded), "truncated": False}


@dataclass
class ByteMiscount(DwReference):
    """`preview_bytes` repeats size_bytes instead of counting the preview."""

    def preview(self, encoded: str) -> JSON:
        out = super().preview(encoded)
        return {**out, "preview_bytes": out["size_bytes"]}


@dataclass
class NoFullPayload(DwReference):
    """Cut previews come without the payload and without saying it is unavailable."""

    def event(self, sequence: int, label: str, payload: JSON, include_payloads: bool) -> JSON:
        event = super().event(sequence, label, payload, include_payloads)
        event.pop("payload", None)
        return event


@dataclass
class ZeroUnlimited(DwReference):
    """A limit of 0 is taken as "no limit": whole payloads, never truncated (run with --preview-limit 0)."""

    def preview(self, encoded: str) -> JSON:
        if self.preview_limit:
            return super().preview(encoded)
        size = len(encoded.encode("utf-8"))
        return {
            "encoding": "json",
            "size_bytes": size,
            "preview_bytes": size,
            "truncated": False,
            "preview": encoded,
        }


@dataclass
class LimitMismatch(DwReference):
    """The document announces twice the limit the results use."""

    def document(self) -> JSON:
        return {**super().document(), "payload_preview_limit_bytes": 2 * self.preview_limit}


@dataclass
class V14Surface(DwReference):
    """A tool uses durable_surface "workflow_diagnostics", which only catalog version 14 knows."""

    def tools(self) -> list[DwTool]:
        return _retool(super().tools(), "get_workflow_history", durable_surface="workflow_diagnostics")


@dataclass
class BadEnvelope(DwReference):
    """The tool-result envelopes (list_workflows, get_workflow_result) have no version."""

    def envelope(self, result: Any) -> JSON:
        body = super().envelope(result)
        del body["version"]
        return body


@dataclass
class Unstable(DwReference):
    """Each fetch of the document reports another server version: two fetches in one session differ."""

    fetched: int = 0

    def document(self) -> JSON:
        doc = super().document()
        self.fetched += 1
        doc["server"] = {**doc["server"], "version": f"0.1.{self.fetched}"}
        return doc


DEFECTS: dict[str, Callable[[int], DwReference]] = {
    "no-schema": NoSchema,
    "wrong-schema": WrongSchema,
    "surface-tool-only": SurfaceToolOnly,
    "no-document": NoDocument,
    "bad-tool-name": BadToolName,
    "ghost-tool": GhostTool,
    "undocumented-tool": UndocumentedTool,
    "schema-drift": SchemaDrift,
    "preview-over-limit": PreviewOverLimit,
    "preview-mid-char": PreviewMidChar,
    "truncated-false": TruncatedFalse,
    "byte-miscount": ByteMiscount,
    "no-full-payload": NoFullPayload,
    "zero-unlimited": ZeroUnlimited,
    "limit-mismatch": LimitMismatch,
    "v14-surface": V14Surface,
    "bad-envelope": BadEnvelope,
    "unstable": Unstable,
}


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--defect", choices=sorted(DEFECTS), required=True)
    known, rest = parser.parse_known_args(argv)
    return main(
        rest, DEFECTS[known.defect], prog=f"python -m tests.servers.dw_mutants --defect {known.defect}"
    )


if __name__ == "__main__":
    sys.exit(run())
