"""The result shapes the base suite uses are strict, and agree with the official MCP schema files.

The official `schema.json` of each revision (beside the checkout, never in the project) is only an
independent oracle here: what the reference server sends must satisfy both.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from conformance.adapters.stdio import StdioAdapter
from conformance.adapters.transcript import Transcript
from conformance.protocol.session import Session
from conformance.schemas import shape_errors


def test_shapes_are_strict_about_types() -> None:
    assert shape_errors("error", {"code": "-32601", "message": "x"}, "legacy")
    assert shape_errors(
        "listToolsResult", {"tools": [{"name": "a", "inputSchema": {"type": "array"}}]}, "legacy"
    )
    good = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    assert shape_errors("listToolsResult", good, "legacy") == []
    assert shape_errors(
        "listToolsResult", good, "modern"
    )  # 2026-07-28 also needs resultType, cacheScope, ttlMs
    assert shape_errors(
        "listToolsResult", {**good, "resultType": "complete", "cacheScope": "public", "ttlMs": "0"}, "modern"
    )


async def _collect(revision: str) -> dict[str, Any]:
    adapter = StdioAdapter([sys.executable, "-m", "conformance_reference.base_server"], Transcript())
    await adapter.start()
    session = Session(adapter, revision, timeout=10)
    try:
        identity = await session.open()
        out: dict[str, Any] = {"opening": identity.opening.result if identity.opening else None}
        out["tools/list"] = (await session.request("tools/list")).result
        out["tools/call"] = (
            await session.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        ).result
        out["resources/list"] = (await session.request("resources/list")).result
        out["resources/read"] = (await session.request("resources/read", {"uri": "ref://docs/readme"})).result
        return out
    finally:
        await session.close()


OFFICIAL = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/read": "ReadResourceResult",
}
OURS = {
    "initialize": "initializeResult",
    "server/discover": "discoverResult",
    "tools/list": "listToolsResult",
    "tools/call": "callToolResult",
    "resources/list": "listResourcesResult",
    "resources/read": "readResourceResult",
}


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_reference_results_satisfy_ours_and_the_official_schema(revision: str, shared_dir: Path) -> None:
    official = json.loads((shared_dir / "mcp-schema" / f"{revision}.schema.json").read_text())
    defs_key = "$defs" if "$defs" in official else "definitions"
    cls = Draft7Validator if defs_key == "definitions" else Draft202012Validator
    era = "modern" if revision == "2026-07-28" else "legacy"
    results = asyncio.run(_collect(revision))
    results[("server/discover" if era == "modern" else "initialize")] = results.pop("opening")
    for method, result in results.items():
        oracle = cls({"$ref": f"#/{defs_key}/{OFFICIAL[method]}", defs_key: official[defs_key]})
        assert not list(oracle.iter_errors(result)), (method, [e.message for e in oracle.iter_errors(result)])
        assert shape_errors(OURS[method], result, era) == [], method
