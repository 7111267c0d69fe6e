"""The apps checks: one per row of requirements.json, each reading the shared view (`view.py`).

One defect, one verdict: a resource that cannot be read FAILs the link row, and the rows about what the
read serves SKIP blocked by it; a `_meta.ui` of the wrong shape FAILs the shape row, and the origin row
SKIPs blocked by it. Where some items can be judged and others cannot, the judged ones decide and the
others are named in a note.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from conformance.pack_api import CaseContext, blocked, check, missed, skip
from conformance_packs.apps.view import (
    APP_MIME,
    EXTENSION_ID,
    AppsView,
    Read,
    ToolCall,
    UiTool,
    call_tools,
    declares,
    meaningful,
    offered,
    same_mime,
    ui_tools,
)

CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
#: What UIResourceMeta holds: on a tool's `_meta.ui` a host ignores it.
RESOURCE_META = ("csp", "permissions", "domain", "prefersBorder")
VISIBILITY = ("model", "app")
#: An origin as a CSP source and the specification's examples write it: scheme://host[:port], a
#: wildcard subdomain allowed, no path but a lone slash, no credentials, query or fragment.
ORIGIN = re.compile(
    r"^[A-Za-z][A-Za-z0-9+.-]*://(?:\*\.)?(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])"
    r"(?::(?:[0-9]{1,5}|\*))?/?$"
)
#: What an HTML document may begin with before its DOCTYPE: a BOM, ASCII whitespace and comments.
PREAMBLE = re.compile(r"^\ufeff?(?:[\t\n\f\r ]|<!--.*?-->)*", re.S)
SHOWN = 5


def _listed(items: list[str]) -> str:
    return "; ".join(items[:SHOWN]) + (f" (and {len(items) - SHOWN} more)" if len(items) > SHOWN else "")


# ------------------------------------------------------------------ the extension and the fallback


@check(
    "apps.extension.declared",
    "APPS-EXT-001",
    "a server offering UI declares io.modelcontextprotocol/ui in capabilities.extensions",
    revisions=("2026-07-28",),
)
async def extension_declared(ctx: CaseContext) -> None:
    view = await offered(ctx)
    extensions = view.capabilities.get("extensions")
    if not isinstance(extensions, dict) or EXTENSION_ID not in extensions:
        missed(
            f"the server offers UI but its server/discover capabilities carry no extensions[{EXTENSION_ID!r}]"
        )
    if not isinstance(extensions[EXTENSION_ID], dict):
        missed(
            f"capabilities.extensions[{EXTENSION_ID!r}] is {extensions[EXTENSION_ID]!r}, not a settings "
            "object"
        )
    ctx.note(f"capabilities.extensions[{EXTENSION_ID!r}] = {extensions[EXTENSION_ID]!r}")


@check(
    "apps.extension.client-checked",
    "APPS-EXT-002",
    "a server shows UI-enabled tools only to a client that declared io.modelcontextprotocol/ui",
)
async def client_checked(ctx: CaseContext) -> None:
    """The shared session is the client without Apps: its one listing (every page, shared with the other
    rows) is the evidence, so a server without UI costs nothing more; PASS needs the Apps view to show UI
    tools, else there is nothing the server could have held back."""
    session = await ctx.session()
    if declares(session.client.capabilities):
        skip(f"this run's client declares {EXTENSION_ID}: no session asks as a client without Apps")
    listing = await ctx.list_all("tools/list", "tools") if ctx.identity.has("tools") else None
    shown = ui_tools([t for t in (listing.items if listing else []) if isinstance(t, dict)])
    if shown:
        missed(
            f"UI-enabled tool(s) listed with their UI metadata to a client that declared no {EXTENSION_ID} "
            f"extension (a host without Apps ignores it; the tool still answers as a standard tool): "
            + _listed([f"{t.name} ({_ui_keys(t)})" for t in shown])
        )
    view = await offered(ctx)
    if not view.tools:
        skip("no tool carries UI metadata to a client that negotiated Apps either: nothing held back")
    plain = {t.get("name") for t in (listing.items if listing else []) if isinstance(t, dict)}
    variants = [t.name for t in view.tools if t.name in plain]
    ctx.note(
        f"{len(view.tools)} UI tool(s) shown to a client that negotiated Apps; to one that did not, "
        + (f"listed without UI metadata: {_listed(variants)}" if variants else "none is listed")
    )


def _ui_keys(tool: UiTool) -> str:
    keys = ["_meta.ui"] if tool.nested is not None else []
    if tool.flat is not None:
        keys.append('_meta["ui/resourceUri"]')
    return " and ".join(keys)


def _judge_calls(ctx: CaseContext, calls: list[ToolCall], where: str) -> None:
    """FAIL the tools whose first successful result has no meaningful content; SKIP when none answered."""
    answered = [c for c in calls if c.result() is not None]
    for c in calls:
        if c.why:
            ctx.note(f"{c.name}: {c.why}")
    if not answered:
        skip(f"no UI tool answered {where} with a result to judge" + (f" ({calls[0].why})" if calls else ""))
    bad = [f"{c.name}: {meaningful(r)}" for c in answered if (r := c.result()) is not None and meaningful(r)]
    if bad:
        missed(f"UI tool result(s) {where} without meaningful content: {_listed(bad)}")
    ctx.note(f"{len(answered)} UI tool(s) answered {where} with meaningful content")


@check(
    "apps.fallback.content",
    "APPS-FALLBACK-001",
    "a UI tool still answers with meaningful content to a client that did not negotiate Apps",
)
async def fallback_content(ctx: CaseContext) -> None:
    view = await offered(ctx)
    names = {t.name for t in view.tools}
    listing = await ctx.list_all("tools/list", "tools") if ctx.identity.has("tools") else None
    shared = [t for t in (listing.items if listing else []) if isinstance(t, dict)]
    plain = ui_tools(shared)
    names |= {t.name for t in plain}
    chosen = [UiTool(t, None, None) for t in shared if t.get("name") in names]
    if not chosen:
        skip(
            "none of the UI tools is listed to a client that did not negotiate Apps (Servers MAY register "
            "different tool variants based on host capabilities)"
        )
    if not any(ctx.may_call(t.tool) for t in chosen):
        skip(f"--call-tools {ctx.options.call_tools} lets the harness call none of the UI tools")
    _judge_calls(ctx, await call_tools(ctx, None, chosen), "to a client without Apps")


@check(
    "apps.result.content",
    "APPS-RESULT-001",
    "a UI tool's result carries a meaningful content array when Apps is negotiated",
)
async def result_content(ctx: CaseContext) -> None:
    view = await offered(ctx)
    if not view.tools:
        skip("no tool carries UI metadata")
    if not any(ctx.may_call(t.tool) for t in view.tools):
        skip(f"--call-tools {ctx.options.call_tools} lets the harness call none of the UI tools")
    _judge_calls(ctx, await call_tools(ctx, view.session, view.tools), "with Apps negotiated")


# ------------------------------------------------------------------ tool metadata


def _tool_meta_problems(tool: UiTool) -> list[str]:
    problems = []
    if tool.nested is not None:
        if not isinstance(tool.nested, dict):
            return [f"_meta.ui is {type(tool.nested).__name__}, not an object"]
        uri, visibility = tool.nested.get("resourceUri"), tool.nested.get("visibility")
        if "resourceUri" in tool.nested and not isinstance(uri, str):
            problems.append(f"_meta.ui.resourceUri is {uri!r}, not a string")
        if "visibility" in tool.nested and (
            not isinstance(visibility, list) or any(v not in VISIBILITY for v in visibility)
        ):
            problems.append(f'_meta.ui.visibility is {visibility!r}, not an array of "model" and "app"')
    if tool.flat is not None and not isinstance(tool.flat, str):
        problems.append(f'_meta["ui/resourceUri"] is {tool.flat!r}, not a string')
    return problems


@check(
    "apps.tool.meta-shape", "APPS-TOOLMETA-001", "a tool's _meta.ui has the shape the specification defines"
)
async def tool_meta_shape(ctx: CaseContext) -> None:
    view = await offered(ctx)
    if not view.tools:
        skip("no tool carries UI metadata")
    bad = [f"{t.name}: {p}" for t in view.tools for p in _tool_meta_problems(t)]
    if bad:
        missed(f"tool UI metadata of the wrong shape: {_listed(bad)}")
    app_only = [t.name for t in view.tools if not t.model_visible]
    if app_only:
        ctx.note(f"app-only tools (a host keeps them from the model): {', '.join(app_only[:SHOWN])}")


@check(
    "apps.tool.legacy-key", "APPS-LEGACY-001", "tools use _meta.ui.resourceUri, not the deprecated flat key"
)
async def legacy_key(ctx: CaseContext) -> None:
    view = await offered(ctx)
    flat = [t for t in view.tools if t.flat is not None]
    if not view.tools:
        skip("no tool carries UI metadata")
    bad = []
    for t in flat:
        nested = t.nested.get("resourceUri") if isinstance(t.nested, dict) else None
        if nested is None:
            bad.append(f'{t.name}: only the deprecated _meta["ui/resourceUri"]')
        elif nested != t.flat:
            bad.append(
                f'{t.name}: _meta["ui/resourceUri"] {t.flat!r} differs from _meta.ui.resourceUri {nested!r}'
            )
    if bad:
        missed(f"deprecated flat key: {_listed(bad)}")
    if flat:
        ctx.note(
            f"{len(flat)} tool(s) carry the flat key beside _meta.ui.resourceUri, equal (for older hosts)"
        )


@check(
    "apps.meta.location",
    "APPS-META-002",
    "resource metadata (csp, permissions, domain, prefersBorder) sits on the resource, not on the tool",
)
async def meta_location(ctx: CaseContext) -> None:
    view = await offered(ctx)
    if not view.tools:
        skip("no tool carries UI metadata")
    bad = [
        f"{t.name}: _meta.ui.{key}"
        for t in view.tools
        if isinstance(t.nested, dict)
        for key in RESOURCE_META
        if key in t.nested
    ]
    if bad:
        missed(
            "resource metadata on a tool, where hosts do not read it (it belongs on the resource's listing "
            f"entry or read content): {_listed(bad)}"
        )


# ------------------------------------------------------------------ links and URIs


def _linked(ctx: CaseContext, view: AppsView) -> list[str]:
    uris = list(dict.fromkeys(t.uri for t in view.tools if t.uri))
    if not uris:
        if any(_tool_meta_problems(t) for t in view.tools):
            blocked("apps.tool.meta-shape", "no tool names a resourceUri of the right shape")
        skip("no tool names a UI resource (resourceUri)")
    return uris


@check("apps.link.exists", "APPS-LINK-001", "every tool's UI resourceUri names a resource the server serves")
async def link_exists(ctx: CaseContext) -> None:
    view = await offered(ctx)
    uris = _linked(ctx, view)
    listed = {r.get("uri") for r in view.listed}
    bad = [f"{u}: {view.reads[u].failure()}" for u in uris if u in view.reads and view.reads[u].failure()]
    if bad:
        missed(f"resourceUri(s) the server does not serve: {_listed(bad)}")
    unlisted = [u for u in uris if u not in listed]
    if unlisted:
        ctx.note(
            "read but not in resources/list (allowed: Servers MAY omit UI-only resources): "
            + _listed(unlisted)
        )
    ctx.note(f"{len(uris)} linked UI resource(s) read")


@check("apps.uri.scheme", "APPS-URI-001", "UI resources use the ui:// scheme")
async def uri_scheme(ctx: CaseContext) -> None:
    view = await offered(ctx)
    uris = [(f"tool {t.name}", t.uri) for t in view.tools if t.uri]
    uris += [
        ("listed", str(r.get("uri")))
        for r in view.listed
        if isinstance(r.get("mimeType"), str) and same_mime(r["mimeType"])
    ]
    if not uris:
        skip("no tool names a resourceUri and no listed resource has the MCP App MIME type")
    bad = [f"{where}: {uri}" for where, uri in uris if not uri.startswith("ui://")]
    if bad:
        missed(f"UI resource URI(s) without the ui:// scheme: {_listed(bad)}")


# ------------------------------------------------------------------ what a read serves


def _served(view: AppsView) -> list[tuple[Read, dict[str, Any]]]:
    """(read, content item) of every read that served contents; blocked by the link row when no linked
    read did, SKIP when nothing was read."""
    good = [
        (r, item)
        for r in view.reads.values()
        if not r.failure()
        for item in r.contents()
        if isinstance(item, dict)
    ]
    if good:
        return good
    if _empty(view):
        blocked("apps.content.text-or-blob", "no UI resource read served a content item")
    linked = {t.uri for t in view.tools}
    if any(r.failure() for u, r in view.reads.items() if u in linked):
        blocked("apps.link.exists", "no linked UI resource could be read")
    skip("no UI resource was read" + (f": {next(iter(view.reads.values())).failure()}" if view.reads else ""))


@check("apps.mime.read", "APPS-MIME-001", "a UI resource is read with mimeType text/html;profile=mcp-app")
async def mime_read(ctx: CaseContext) -> None:
    view = await offered(ctx)
    bad: list[str] = []
    spelled: list[str] = []
    for read, item in _served(view):
        mime = item.get("mimeType")
        if mime == APP_MIME:
            continue
        (spelled if isinstance(mime, str) and same_mime(mime) else bad).append(f"{read.uri}: {mime!r}")
    if bad:
        missed(f"UI resource content with another MIME type than {APP_MIME}: {_listed(bad)}")
    if spelled:
        ctx.soft_warn(
            f"the MCP App MIME type spelled otherwise (hosts compare the string): {_listed(spelled)}"
        )


@check(
    "apps.mime.listed", "APPS-MIME-002", "a listed UI resource declares mimeType text/html;profile=mcp-app"
)
async def mime_listed(ctx: CaseContext) -> None:
    view = await offered(ctx)
    listed = view.ui_listed()
    if not listed:
        skip("no UI resource is listed (allowed: Servers MAY omit UI-only resources from resources/list)")
    bad = [f"{r.get('uri')}: {r.get('mimeType')!r}" for r in listed if r.get("mimeType") != APP_MIME]
    if bad:
        missed(f"listed UI resource(s) with another mimeType than {APP_MIME}: {_listed(bad)}")


def _empty(view: AppsView) -> list[str]:
    """The reads answered with a result that holds no content item: the resource exists, serving nothing."""
    return [f"{r.uri}: no content item" for r in view.reads.values() if not r.failure() and not r.contents()]


def _html(item: dict[str, Any]) -> tuple[str | None, str]:
    """The content's HTML text, or None and why it has none (text, else a base64 blob)."""
    if isinstance(item.get("text"), str):
        return item["text"], ""
    blob = item.get("blob")
    if not isinstance(blob, str):
        return None, "neither a string text nor a string blob"
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return None, f"a blob that is not base64: {blob[:40]!r}"
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, ""


@check(
    "apps.content.text-or-blob", "APPS-CONTENT-001", "a UI resource's content is given as text or base64 blob"
)
async def content_text_or_blob(ctx: CaseContext) -> None:
    view = await offered(ctx)
    empty = _empty(view)
    served = [] if empty and not any(r.contents() for r in view.reads.values()) else _served(view)
    bad = empty + [f"{read.uri}: {why}" for read, item in served if (why := _html(item)[1])]
    if bad:
        missed(f"UI resource content neither text nor base64 blob: {_listed(bad)}")


@check("apps.content.html5", "APPS-CONTENT-002", "a UI resource's content is an HTML5 document (its DOCTYPE)")
async def content_html5(ctx: CaseContext) -> None:
    view = await offered(ctx)
    docs = [(read.uri, text) for read, item in _served(view) if (text := _html(item)[0]) is not None]
    if not docs:
        blocked("apps.content.text-or-blob", "no UI resource content could be read as text")
    bad = [f"{uri}: begins {_body(text)[:30]!r}" for uri, text in docs if not _doctype(text)]
    if bad:
        missed(f"UI resource content that does not begin with the HTML DOCTYPE: {_listed(bad)}")
    ctx.note("only the DOCTYPE an HTML5 document must begin with is judged")


def _body(text: str) -> str:
    """The text after what may precede a DOCTYPE (the pattern matches at least the empty string)."""
    match = PREAMBLE.match(text)
    return text[match.end() if match else 0 :]


def _doctype(text: str) -> bool:
    rest = _body(text)
    return rest[:14].lower() == "<!doctype html" and (len(rest) == 14 or rest[14] in "\t\n\f\r >")


# ------------------------------------------------------------------ resource metadata


def _ui_metas(view: AppsView) -> list[tuple[str, Any]]:
    """(where, `_meta.ui`) of every UI resource listing entry and read content item that carries one."""
    out = []
    for r in view.ui_listed():
        meta = r.get("_meta")
        if isinstance(meta, dict) and "ui" in meta:
            out.append((f"resources/list {r.get('uri')}", meta["ui"]))
    for read in view.reads.values():
        for item in read.contents():
            meta = item.get("_meta") if isinstance(item, dict) else None
            if isinstance(meta, dict) and "ui" in meta:
                out.append((f"resources/read {read.uri}", meta["ui"]))
    return out


def _meta_problems(ui: Any) -> list[str]:
    if not isinstance(ui, dict):
        return [f"_meta.ui is {type(ui).__name__}, not an object"]
    problems = []
    csp, permissions = ui.get("csp"), ui.get("permissions")
    if "csp" in ui:
        if not isinstance(csp, dict):
            problems.append(f"csp is {type(csp).__name__}, not an object")
        else:
            for key in CSP_KEYS:
                value = csp.get(key)
                if key in csp and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
                    problems.append(f"csp.{key} is {str(value)[:60]!r}, not an array of strings")
    if "permissions" in ui:
        if not isinstance(permissions, dict):
            problems.append(f"permissions is {type(permissions).__name__}, not an object")
        else:
            problems += [
                f"permissions.{k} is {permissions[k]!r}, not an object"
                for k in PERMISSIONS
                if k in permissions and not isinstance(permissions[k], dict)
            ]
    if "domain" in ui and not isinstance(ui["domain"], str):
        problems.append(f"domain is {ui['domain']!r}, not a string")
    if "prefersBorder" in ui and not isinstance(ui["prefersBorder"], bool):
        problems.append(f"prefersBorder is {ui['prefersBorder']!r}, not a boolean")
    return problems


@check("apps.meta.shape", "APPS-META-001", "a UI resource's _meta.ui has the shape the specification defines")
async def meta_shape(ctx: CaseContext) -> None:
    view = await offered(ctx)
    metas = _ui_metas(view)
    if not metas:
        skip("no UI resource carries _meta.ui (allowed: a host then applies its restrictive default)")
    bad = [f"{where}: {p}" for where, ui in metas for p in _meta_problems(ui)]
    if bad:
        missed(f"_meta.ui of the wrong shape: {_listed(bad)}")


@check("apps.csp.origins", "APPS-CSP-001", "CSP domains are origins")
async def csp_origins(ctx: CaseContext) -> None:
    view = await offered(ctx)
    entries, misshapen = [], 0
    for where, ui in _ui_metas(view):
        csp = ui.get("csp") if isinstance(ui, dict) else None
        if csp is None:
            continue
        if not isinstance(csp, dict):
            misshapen += 1
            continue
        for key in CSP_KEYS:
            value = csp.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                entries += [(f"{where} csp.{key}", v) for v in value]
            elif key in csp:
                misshapen += 1
    if not entries:
        if misshapen:
            blocked("apps.meta.shape", "every csp declared has the wrong shape")
        skip("no UI resource declares csp domains")
    bad = [f"{where}: {value!r}" for where, value in entries if not ORIGIN.match(value)]
    if bad:
        missed(f"CSP entries that are not origins (scheme://host[:port]): {_listed(bad)}")
    ctx.note(f"{len(entries)} CSP entr{'y' if len(entries) == 1 else 'ies'} judged")
