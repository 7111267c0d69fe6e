"""The one list of suites: where each suite's checks live and which reference server it runs against
when no `--server` is given. Plain data, so the CLI can read it without importing any suite.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class SuiteEntry:
    name: str
    #: Module whose import registers the suite's checks (and holds requirements.json beside it).
    module: str
    description: str
    #: Module of the reference server (run with `python -m MODULE`, `--http --port 0` for HTTP).
    reference: str
    #: Module of the reference's fixture controller, for a reference that keeps state. The embedded
    #: default then gives the reference's processes and the controller one state file (`--db FILE`),
    #: because racers over stdio are separate processes that must see one service.
    controller: str | None = None
    #: The first MCP revision the suite judges: the profiles are bindings on structured tool output
    #: (structuredContent, outputSchema), which MCP has from 2025-06-18 on, so an older revision
    #: cannot be judged by them. None: every revision.
    since: str | None = None


SUITES: dict[str, SuiteEntry] = {
    entry.name: entry
    for entry in (
        SuiteEntry(
            "base",
            "suites.base",
            "MCP base protocol: JSON-RPC envelope, lifecycle, tools, resources, HTTP rules",
            "conformance.reference.base_server",
        ),
        SuiteEntry(
            "dw-discovery",
            "suites.dw_discovery",
            "Durable Workflow MCP discovery profile: the discovery document, its live cross-check, previews",
            "conformance.reference.dw_server",
            since="2025-06-18",
        ),
        SuiteEntry(
            "map-review",
            "suites.map_review",
            "MAP publication-approval review profile: read_review/decide_review, digests, decisions, races",
            "conformance.reference.map_server",
            controller="conformance.reference.map_controller",
            since="2025-06-18",
        ),
        SuiteEntry(
            "uwmd",
            "suites.uwmd",
            "UW Markdown MCP binding 1.0: deal resources, the five uwmd tools, If-Match races, security",
            "conformance.reference.uwmd_server",
            controller="conformance.reference.uwmd_controller",
            since="2025-06-18",
        ),
        SuiteEntry(
            "fuzz",
            "suites.fuzz",
            "Property-based fuzzing of every callable tool from its own inputSchema (hypothesis)",
            "conformance.reference.base_server",
        ),
    )
}


def suite_names() -> tuple[str, ...]:
    return tuple(SUITES)


def reference_command(suite: str) -> list[str]:
    return [sys.executable, "-m", SUITES[suite].reference]


def controller_command(suite: str) -> list[str] | None:
    """The command of a suite's reference fixture controller, or None for a stateless reference."""
    module = SUITES[suite].controller
    return [sys.executable, "-m", module] if module else None
