"""Reference MCP Apps server: the embedded default target of the `apps` suite.

Why this exists: the apps suite needs a target known to meet every row it checks (the ext-apps
specification, Stable 2026-01-26), so that a failing check against it is a harness bug, and the
project's mutants (tests/servers/apps_mutants.py) need a base to plant one defect each into.

It is built on the `mcp` SDK's `mcp.server.apps` extension (which advertises
`capabilities.extensions["io.modelcontextprotocol/ui"]`) on an `MCPServer`, served by the shared
framework (`serving`: stdio and loopback Streamable HTTP, both protocol eras). It offers:

- `show_weather`: model- and app-visible, bound to `ui://weather/view.html` (served as text, with CSP,
  permissions and a border preference on the resource), answering text for the model and the same data
  in `structuredContent` for the view, with or without Apps negotiated (the text-only fallback);
- `refresh_weather`: app-only (`visibility: ["app"]`), bound to the same view;
- `compact_weather`: bound to `ui://weather/compact.html`, served base64 in `blob`;
- `plain_echo`: a tool with no UI, which the suite leaves alone.

It checks the client's capabilities before showing a UI tool: a client that did not negotiate Apps
lists `show_weather` and `compact_weather` without UI metadata (their text-only variants) and not the
app-only `refresh_weather`.

Everything a mutant may change is a field of `AppsSpec` or a method of `AppsReference`.

    python -m conformance_reference.apps_server                     # stdio
    python -m conformance_reference.apps_server --http --port 0     # prints LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, Apps, Visibility, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import BinaryResource, TextResource
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from conformance_reference.serving import serve, serving_parser

__all__ = ["VIEW_URI", "AppsReference", "AppsSpec", "build_server", "main"]

JSON = dict[str, Any]

VIEW_URI: Final = "ui://weather/view.html"
COMPACT_URI: Final = "ui://weather/compact.html"
#: The deprecated flat key a tool may carry beside (or instead of) `_meta.ui.resourceUri`.
FLAT_KEY: Final = "ui/resourceUri"

VIEW_HTML: Final = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Weather</title></head>'
    '<body><main id="weather">Loading the forecast...</main></body></html>\n'
)
COMPACT_HTML: Final = (
    '<!doctype html>\n<html><head><meta charset="utf-8"><title>Weather (compact)</title></head>'
    '<body><p id="w"></p></body></html>\n'
)
#: The view's resource metadata (`_meta.ui`): every field the Stable revision defines, as origins.
VIEW_UI: Final[JSON] = {
    "csp": {
        "connectDomains": ["https://api.weather.example", "wss://live.weather.example"],
        "resourceDomains": ["https://cdn.weather.example", "https://*.static.example"],
        "frameDomains": ["https://maps.example"],
        "baseUriDomains": ["https://cdn.weather.example"],
    },
    "permissions": {"clipboardWrite": {}, "geolocation": {}},
    "prefersBorder": True,
}
READ_ONLY: Final = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


@dataclass
class AppsSpec:
    """What the server offers: each field is one thing a mutant may plant a defect in."""

    view_html: str = VIEW_HTML
    view_ui: JSON = field(default_factory=lambda: dict(VIEW_UI))
    compact_uri: str = COMPACT_URI
    #: The `resourceUri` `compact_weather` names (the compact resource's own URI unless a mutant says).
    compact_link: str | None = None
    #: `_meta` of `compact_weather` instead of the SDK's `{"ui": {"resourceUri": ...}}`, when set.
    compact_meta: JSON | None = None
    visibility: tuple[Visibility, ...] = ("model", "app")
    declare_extension: bool = True
    #: Show the UI tools as such only to a client that negotiated Apps (`text_only` for the others).
    check_client: bool = True


def forecast(city: str) -> JSON:
    """The data a view renders: deterministic, so every run sends and sees the same."""
    return {"city": city, "conditions": "sunny", "celsius": 21}


class AppsReference(MCPServer):
    """An `MCPServer` whose answers a mutant can bend at the wire: the listed resources, a read's
    contents and a UI tool's result, each through one method."""

    def __init__(self, spec: AppsSpec) -> None:
        self.spec = spec
        apps = _apps(spec)
        super().__init__("apps-reference", version="1.0.0", extensions=[apps])
        _extra(self, spec)
        if not spec.declare_extension:
            self._lowlevel_server.extensions.pop(EXTENSION_ID, None)

    def weather_result(self, city: str, negotiated: bool) -> CallToolResult:
        """Text for the model (and for a host without Apps), the same data structured for the view."""
        data = forecast(city)
        text = f"Weather in {city}: {data['conditions']}, {data['celsius']} °C"
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    def listed(self, resources: list[Any]) -> list[Any]:
        return resources

    async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
        """The ext-apps text: "Servers SHOULD check client capabilities before registering UI-enabled
        tools". A client that did not negotiate Apps (per request in 2026-07-28, at initialize before)
        is shown each UI tool's text-only variant, and no app-only tool (there is no app to call it)."""
        result = await super()._handle_list_tools(ctx, params)
        if not self.spec.check_client or client_supports_apps(ctx):
            return result
        return result.model_copy(update={"tools": text_only(list(result.tools))})

    def read_contents(self, contents: list[Any]) -> list[Any]:
        return contents

    async def _handle_list_resources(self, ctx: Any, params: Any) -> Any:
        result = await super()._handle_list_resources(ctx, params)
        return result.model_copy(update={"resources": self.listed(list(result.resources))})

    async def _handle_read_resource(self, ctx: Any, params: Any) -> Any:
        result = await super()._handle_read_resource(ctx, params)
        if not hasattr(result, "contents"):
            return result
        return result.model_copy(update={"contents": self.read_contents(list(result.contents))})


def text_only(tools: list[Any]) -> list[Any]:
    """The tools as a host without Apps is shown them: no `_meta.ui` or flat `ui/resourceUri`, and no
    tool whose visibility leaves out the model."""
    out = []
    for tool in tools:
        meta = dict(tool.meta or {})
        ui = meta.pop("ui", None)
        meta.pop(FLAT_KEY, None)
        visibility = ui.get("visibility") if isinstance(ui, dict) else None
        if isinstance(visibility, list) and "model" not in visibility:
            continue
        out.append(tool.model_copy(update={"meta": meta or None}))
    return out


def _apps(spec: AppsSpec) -> Apps:
    """The Apps extension: the view resource and the tools bound to it, through the SDK's own API."""
    apps = Apps()
    # `add_resource` keeps the `_meta.ui` as given (a mutant's malformed CSP is not validated away).
    apps.add_resource(
        TextResource(
            uri=VIEW_URI,
            name="weather_view",
            mime_type=APP_MIME_TYPE,
            meta={"ui": spec.view_ui},
            text=spec.view_html,
        )
    )

    @apps.tool(
        resource_uri=VIEW_URI,
        visibility=list(spec.visibility),
        name="show_weather",
        description="Show the weather for a city in an interactive view.",
        annotations=READ_ONLY,
    )
    def show_weather(city: str, ctx: Context) -> CallToolResult:
        return _server(ctx).weather_result(city, client_supports_apps(ctx))

    @apps.tool(
        resource_uri=VIEW_URI,
        visibility=["app"],
        name="refresh_weather",
        description="Refresh the weather view (called by the view only).",
        annotations=READ_ONLY,
    )
    def refresh_weather(city: str, ctx: Context) -> CallToolResult:
        return _server(ctx).weather_result(city, client_supports_apps(ctx))

    return apps


def _server(ctx: Context) -> AppsReference:
    server = ctx.mcp_server
    assert isinstance(server, AppsReference)
    return server


def _extra(server: AppsReference, spec: AppsSpec) -> None:
    """The compact view (base64 `blob`) and its tool, and a plain tool: added on the server itself, so a
    mutant may bind the tool to a URI the SDK's Apps helper would refuse (no such resource, no ui://)."""
    server.add_resource(
        BinaryResource(
            uri=spec.compact_uri,
            name="weather_compact",
            mime_type=APP_MIME_TYPE,
            data=COMPACT_HTML.encode(),
        )
    )
    link = spec.compact_link or spec.compact_uri
    meta = spec.compact_meta if spec.compact_meta is not None else {"ui": {"resourceUri": link}}

    def compact_weather(city: str, ctx: Context) -> CallToolResult:
        return _server(ctx).weather_result(city, client_supports_apps(ctx))

    server.add_tool(
        compact_weather,
        name="compact_weather",
        description="Show the weather for a city, compactly.",
        annotations=READ_ONLY,
        meta=meta,
    )

    def plain_echo(text: str) -> str:
        return text

    server.add_tool(
        plain_echo, name="plain_echo", description="Echo the text (no UI).", annotations=READ_ONLY
    )


def build_server(spec: AppsSpec | None = None, kind: type[AppsReference] = AppsReference) -> Any:
    """The SDK's low-level server under the `MCPServer`, which the serving framework serves."""
    return kind(spec or AppsSpec())._lowlevel_server


def main(
    argv: Sequence[str] | None = None,
    make: Callable[[], tuple[AppsSpec, type[AppsReference]]] = lambda: (AppsSpec(), AppsReference),
    prog: str = "python -m conformance_reference.apps_server",
) -> int:
    parser: argparse.ArgumentParser = serving_parser(prog, "Reference MCP Apps server (ext-apps 2026-01-26).")
    args = parser.parse_args(argv)
    spec, kind = make()
    return serve(build_server(spec, kind), args)


if __name__ == "__main__":
    sys.exit(main())
