"""What the apps checks judge, gathered once per (target, revision) and shared by them.

Two views of one server: the shared session's (the harness declares no extension: a host without Apps),
whose tools/list and resources/list the base suite fetches too (`ctx.list_all`), and a session that
negotiates Apps (`capabilities.extensions["io.modelcontextprotocol/ui"]`), opened only when the first
view shows UI, the server declares the extension, or the user named the suite. On it the linked
resources are read once each and the UI tools called, for every check to read.

Why a gate: most servers offer no UI, and the pack runs by default, so a server without UI must cost
nothing beyond the listings the base suite already fetched; its rows SKIP with one reason.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    Call,
    CaseContext,
    HandshakeFailed,
    Session,
    TransportTimeout,
    candidates,
    skip,
)

EXTENSION_ID = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"
FLAT_KEY = "ui/resourceUri"
#: What the Apps session declares: the extension with the one MIME type the Stable revision defines.
APPS_CAPABILITIES: dict[str, Any] = {"extensions": {EXTENSION_ID: {"mimeTypes": [APP_MIME]}}}
#: Arguments tried per tool, and calls left unanswered in one view before the rest are not sent.
TRIES = 3
TIMEOUTS = 2
#: Resources read per view at most (a server may link hundreds of tools to a few views).
READ_CAP = 50


@dataclass
class UiTool:
    """A listed tool that carries UI metadata (`_meta.ui`, or the deprecated flat key)."""

    tool: dict[str, Any]
    nested: Any
    flat: Any

    @property
    def name(self) -> str:
        return str(self.tool.get("name"))

    @property
    def uri(self) -> str | None:
        """The URI a host renders: `_meta.ui.resourceUri`, else the flat key (accepted, deprecated)."""
        if isinstance(self.nested, dict) and isinstance(self.nested.get("resourceUri"), str):
            return str(self.nested["resourceUri"])
        return self.flat if isinstance(self.flat, str) else None

    @property
    def model_visible(self) -> bool:
        visibility = self.nested.get("visibility") if isinstance(self.nested, dict) else None
        return not isinstance(visibility, list) or "model" in visibility


@dataclass
class Read:
    """One resources/read of a linked or listed UI resource on the Apps session."""

    uri: str
    call: Call | None
    why: str = ""

    def contents(self) -> list[Any]:
        result = self.call.result if self.call is not None else None
        contents = result.get("contents") if isinstance(result, dict) else None
        return contents if isinstance(contents, list) else []

    def failure(self) -> str:
        """Why the read served nothing ('' when it served contents)."""
        if self.why:
            return self.why
        assert self.call is not None
        if isinstance(self.call.error, dict):
            return (
                f"answered error {self.call.error.get('code')}: {str(self.call.error.get('message'))[:120]}"
            )
        return "" if isinstance(self.call.result, dict) else "answered with no result"


@dataclass
class ToolCall:
    """A UI tool called until one candidate was answered with a result that is no tool error."""

    name: str
    arguments: Any = None
    call: Call | None = None
    why: str = ""

    def result(self) -> dict[str, Any] | None:
        return self.call.result if self.call is not None and isinstance(self.call.result, dict) else None


@dataclass
class AppsView:
    """The server as a host that negotiated Apps sees it."""

    capabilities: dict[str, Any]
    tools: list[UiTool]
    listed: list[dict[str, Any]]
    reads: dict[str, Read] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    session: Session | None = None
    problem: str = ""

    def ui_listed(self) -> list[dict[str, Any]]:
        """Listed resources a host would treat as UI: a ui:// URI, the MCP App MIME type, or linked."""
        linked = {t.uri for t in self.tools}
        return [r for r in self.listed if is_ui_resource(r) or r.get("uri") in linked]


def ui_tools(tools: list[Any]) -> list[UiTool]:
    out = []
    for tool in tools:
        meta = tool.get("_meta") if isinstance(tool, dict) else None
        if isinstance(meta, dict) and ("ui" in meta or FLAT_KEY in meta):
            out.append(UiTool(tool, meta.get("ui"), meta.get(FLAT_KEY)))
    return out


def is_ui_resource(resource: Any) -> bool:
    if not isinstance(resource, dict):
        return False
    uri, mime = resource.get("uri"), resource.get("mimeType")
    return (isinstance(uri, str) and uri.startswith("ui://")) or (isinstance(mime, str) and same_mime(mime))


def same_mime(value: str) -> bool:
    """The MCP App media type however spelled: type and parameter name case-insensitive, optional
    whitespace around the semicolon, the value optionally quoted (RFC 9110, 8.3.1)."""
    kind, _, rest = value.partition(";")
    if kind.strip().lower() != "text/html":
        return False
    params = [p.strip() for p in rest.split(";") if p.strip()]
    for param in params:
        name, _, val = param.partition("=")
        if name.strip().lower() == "profile" and val.strip().strip('"') == "mcp-app":
            return True
    return False


async def _objects(ctx: CaseContext, method: str, key: str, capability: str) -> list[dict[str, Any]]:
    if not ctx.identity.has(capability):
        return []
    listing = await ctx.list_all(method, key)
    return [i for i in listing.items if isinstance(i, dict)]


async def plain(ctx: CaseContext) -> tuple[list[UiTool], list[dict[str, Any]]]:
    """The UI tools and UI resources the shared session (no extension declared) is shown."""
    tools = await _objects(ctx, "tools/list", "tools", "tools")
    resources = await _objects(ctx, "resources/list", "resources", "resources")
    return ui_tools(tools), [r for r in resources if is_ui_resource(r)]


def declares(capabilities: dict[str, Any]) -> bool:
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and EXTENSION_ID in extensions


async def offered(ctx: CaseContext) -> AppsView:
    """The Apps view, or SKIP (the same reason for every row) when the server offers no UI."""
    tools, resources = await plain(ctx)
    claimed = "apps" in ctx.options.claimed_suites
    if not (tools or resources or declares(ctx.identity.capabilities) or claimed):
        skip(
            f"no UI offered: the server declares no {EXTENSION_ID} extension and lists no tool with "
            "_meta.ui (or the flat ui/resourceUri) and no ui:// resource to a client that did not negotiate "
            "Apps (name --suite apps to ask as a client that negotiates it too)",
            kind="not-applicable",
        )
    view: AppsView = await ctx.remember_once(
        "apps:view", "opening a session that negotiates MCP Apps", lambda: _open(ctx)
    )
    ctx.attach(view.entries)
    if not view.tools and not view.ui_listed():
        skip(
            "no UI offered to a client that negotiated MCP Apps either: no tool carries _meta.ui or the flat "
            "ui/resourceUri and no ui:// resource is listed" + (f" ({view.problem})" if view.problem else ""),
            kind="not-applicable",
        )
    return view


async def _open(ctx: CaseContext) -> AppsView:
    """Open the Apps session, list its tools and resources, and read every UI resource once."""
    mark = ctx.mark()
    session = await ctx.fresh_session_unopened()
    session.client.capabilities = json.loads(json.dumps(APPS_CAPABILITIES))
    try:
        identity = await session.open()
    except HandshakeFailed as exc:  # no row says a server must accept such a client: nothing to judge
        return AppsView({}, [], [], entries=ctx.wire_since(mark), problem=f"that session did not open: {exc}")
    problems: list[str] = []
    tools: list[Any] = []
    listed: list[Any] = []
    if identity.has("tools"):
        listing = await ctx.list_on(session, "tools/list", "tools")
        tools, problems = listing.items, [*problems, listing.problem]
    if identity.has("resources"):
        listing = await ctx.list_on(session, "resources/list", "resources")
        listed, problems = listing.items, [*problems, listing.problem]
    view = AppsView(
        identity.capabilities,
        ui_tools(tools),
        [r for r in listed if isinstance(r, dict)],
        session=session,
        problem="; ".join(p for p in problems if p),
    )
    uris = list(
        dict.fromkeys([t.uri for t in view.tools if t.uri] + [str(r["uri"]) for r in view.ui_listed()])
    )
    timeouts = 0
    for uri in uris[:READ_CAP]:
        if timeouts >= TIMEOUTS:
            view.reads[uri] = Read(uri, None, "not read: earlier reads went unanswered")
            continue
        try:
            view.reads[uri] = Read(uri, await session.request("resources/read", {"uri": uri}))
        except TransportTimeout:
            timeouts += 1
            view.reads[uri] = Read(uri, None, f"no answer within {ctx.options.timeout:g} s")
    view.entries = ctx.wire_since(mark)
    return view


def meaningful(result: dict[str, Any]) -> str:
    """Why `result.content` is not meaningful for a model ('' when it is): a non-empty array with at
    least one block carrying something (a non-blank text, data, a resource, a link)."""
    content = result.get("content")
    if not isinstance(content, list):
        return f"content is {json.dumps(content)[:60]}, not an array"
    if not content:
        return "content is an empty array"
    for block in content:
        if not isinstance(block, dict):
            continue
        text = block.get("text")
        if (isinstance(text, str) and text.strip()) or any(block.get(k) for k in ("data", "resource", "uri")):
            return ""
    return f"no block of content carries anything: {json.dumps(content)[:120]}"


async def call_tools(ctx: CaseContext, session: Session | None, tools: list[UiTool]) -> list[ToolCall]:
    """Each UI tool the `--call-tools` policy allows, called with up to TRIES candidates (on `session`,
    or the shared one) until a result that is no tool error; at most TIMEOUTS calls may go unanswered."""
    chosen = [t for t in tools if ctx.may_call(t.tool)]
    drawn = await asyncio.to_thread(
        lambda: [candidates(t.tool.get("inputSchema", {}), TRIES) for t in chosen]
    )
    out, timeouts = [], 0
    for tool, cands in zip(chosen, drawn, strict=True):
        entry = ToolCall(tool.name)
        out.append(entry)
        values = cands.values()
        if not values:
            entry.why = f"not called: {cands.problem or 'no arguments fit its inputSchema'}"
            continue
        for args in values:
            if timeouts >= TIMEOUTS:
                entry.why = "not called: earlier calls went unanswered"
                break
            params = {"name": tool.name, "arguments": args}
            try:
                call = await (
                    session.request("tools/call", params) if session else ctx.request("tools/call", params)
                )
            except TransportTimeout:
                timeouts += 1
                entry.why = f"no answer within {ctx.options.timeout:g} s"
                break
            if session is not None:
                ctx.calls.append(call)
            entry.arguments, entry.call = args, call
            result = call.result
            if isinstance(result, dict) and result.get("isError") is not True:
                entry.why = ""
                break
            entry.why = "refused every candidate (not held against the server)"
        if entry.why:
            entry.call = None
    return out
