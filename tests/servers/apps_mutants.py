"""Mutants of the reference MCP Apps server, each with exactly one planted defect.

Each defect changes one field of `AppsSpec` or overrides one method of `AppsReference`; everything else
is the reference. tests/packs/apps/test_apps.py runs the apps suite against each and asserts the exact set of
non-PASS verdicts, so a check that misses its defect, or fires on another's, shows.

    python -m tests.servers.apps_mutants --defect NAME [--http --port 0] [--era ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from conformance_reference.apps_server import COMPACT_URI, VIEW_HTML, VIEW_UI, AppsReference, AppsSpec, main

Make = Callable[[], tuple[AppsSpec, type[AppsReference]]]


def _view_ui(**changes: Any) -> dict[str, Any]:
    ui = {**VIEW_UI, **changes}
    return {k: v for k, v in ui.items() if v is not None}


def _csp(**changes: Any) -> dict[str, Any]:
    return _view_ui(csp={**VIEW_UI["csp"], **changes})


class EmptyWithoutApps(AppsReference):
    """A UI tool answers a client that did not negotiate Apps with no content (the view had the data)."""

    def weather_result(self, city: str, negotiated: bool) -> CallToolResult:
        result = super().weather_result(city, negotiated)
        return result if negotiated else result.model_copy(update={"content": []})


class EmptyWithApps(AppsReference):
    """With Apps negotiated, a UI tool puts everything in structuredContent and leaves content empty."""

    def weather_result(self, city: str, negotiated: bool) -> CallToolResult:
        result = super().weather_result(city, negotiated)
        return result.model_copy(update={"content": []}) if negotiated else result


class ReadPlainHtml(AppsReference):
    """The view's listing says the MCP App profile, but the read serves plain text/html."""

    def read_contents(self, contents: list[Any]) -> list[Any]:
        return [c.model_copy(update={"mime_type": "text/html"}) for c in contents]


class ListedPlainHtml(AppsReference):
    """The read serves the MCP App profile, but resources/list declares plain text/html."""

    def listed(self, resources: list[Any]) -> list[Any]:
        return [r.model_copy(update={"mime_type": "text/html"}) for r in resources]


class BlobNotBase64(AppsReference):
    """The compact view's blob is not base64."""

    def read_contents(self, contents: list[Any]) -> list[Any]:
        return [
            c.model_copy(update={"blob": "<!doctype html>%%%"}) if hasattr(c, "blob") else c for c in contents
        ]


class Unreadable(AppsReference):
    """Every UI resource is listed but no read serves it: the rows about what a read serves are blocked."""

    def read_contents(self, contents: list[Any]) -> list[Any]:
        raise MCPError(code=-32002, message="Resource not found")


class NoContents(AppsReference):
    """Every read answers with an empty contents array: the resources exist but serve no document."""

    def read_contents(self, contents: list[Any]) -> list[Any]:
        return []


DEFECTS: dict[str, Make] = {
    "no-extension": lambda: (AppsSpec(declare_extension=False), AppsReference),
    "ui-to-everyone": lambda: (AppsSpec(check_client=False), AppsReference),
    "empty-without-apps": lambda: (AppsSpec(), EmptyWithoutApps),
    "empty-with-apps": lambda: (AppsSpec(), EmptyWithApps),
    "dangling-uri": lambda: (AppsSpec(compact_link="ui://weather/missing.html"), AppsReference),
    "not-ui-scheme": lambda: (AppsSpec(compact_uri="app://weather/compact.html"), AppsReference),
    "read-plain-html": lambda: (AppsSpec(), ReadPlainHtml),
    "listed-plain-html": lambda: (AppsSpec(), ListedPlainHtml),
    "blob-not-base64": lambda: (AppsSpec(), BlobNotBase64),
    "no-doctype": lambda: (AppsSpec(view_html=VIEW_HTML.replace("<!DOCTYPE html>\n", "")), AppsReference),
    "csp-string": lambda: (
        AppsSpec(view_ui=_csp(connectDomains="https://api.weather.example")),
        AppsReference,
    ),
    "csp-path": lambda: (
        AppsSpec(view_ui=_csp(connectDomains=["https://api.weather.example/v1/forecast"])),
        AppsReference,
    ),
    "csp-on-tool": lambda: (
        AppsSpec(compact_meta={"ui": {"resourceUri": COMPACT_URI, "csp": {"connectDomains": []}}}),
        AppsReference,
    ),
    "bad-visibility": lambda: (AppsSpec(visibility=("model", "user")), AppsReference),  # type: ignore[arg-type]
    "flat-key-only": lambda: (AppsSpec(compact_meta={"ui/resourceUri": COMPACT_URI}), AppsReference),
    "unreadable": lambda: (AppsSpec(), Unreadable),
    "no-contents": lambda: (AppsSpec(), NoContents),
}


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--defect", choices=sorted(DEFECTS), required=True)
    known, rest = parser.parse_known_args(argv)
    return main(
        rest, DEFECTS[known.defect], prog=f"python -m tests.servers.apps_mutants --defect {known.defect}"
    )


if __name__ == "__main__":
    sys.exit(run())
