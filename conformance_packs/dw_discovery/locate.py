"""Where the discovery document comes from (DWD-SERVE-001, gap rule G-D1), and the suite's settings.

The target says it, in its TOML file:

    [dw-discovery]
    resource = "dw://mcp/discovery"      # an MCP resource URI, read with resources/read
    tool = "get_mcp_discovery"           # a tool whose result carries the document
    tool_arguments = {}                  # its arguments (default {})
    url = "http://127.0.0.1:8000/mcp-discovery.json"   # HTTP GET; on the target's origin (loopback for stdio)
    file = "discovery.json"              # a local file (relative to the target's cwd)
    # and, for the other checks:
    baseline = "discovery-v1.json"       # DWD-TOOL-004: a stored document of the same version
    preview_tool = "get_workflow_history"                     # DWD-PREV-*: the preview-bearing call(s)
    preview_arguments = {workflow_id = "wf-1", include_payloads = true}   # or an array of tables
    smoke_arguments = {get_workflow_result = {workflow_id = "wf-1"}}      # DWD-TOOL-003 inputs by tool

Several keys: the first of resource, url, tool, file wins. With none, the harness searches: JSON
resources from resources/list whose parsed body has `schema == "durable-workflow.v2.mcp-discovery"`,
then tools annotated `readOnlyHint: true` that take no required argument and whose result carries that
`schema`. When no body carries the marker, a candidate under the profile's well-known names is taken
instead (a resource named or addressed `mcp-discovery`, the `describe_mcp_surface` tool or a tool
named `*mcp_discovery`), so that a document whose `schema` marker is missing or wrong is judged, and
fails its marker row, rather than leaving every row unjudged. Nothing found is the SERVE row's miss (a
WARN, level implied: the target was run for a profile it does not show), naming what was looked for; a
configured location that does not deliver is the server's miss too (it was declared), and a configuration
the harness refuses is ERROR (reported once, by the SERVE check; the other checks SKIP).

The search result is cached per (target, revision) in `ctx.shared`, so every check judges one fetch.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NoReturn
from urllib.parse import urlsplit

from conformance.pack_api import CaseContext
from conformance.pack_api import read_only as core_read_only
from conformance_packs.dw_discovery.document import SCHEMA_ID, is_json_mime

TABLE = "dw-discovery"
SourceKind = Literal["resource", "tool", "url", "file"]
_STRING_KEYS = ("resource", "tool", "url", "file", "baseline", "preview_tool")
_KNOWN_KEYS = (*_STRING_KEYS, "tool_arguments", "preview_arguments", "smoke_arguments")
#: Bounds on the search, so a server with thousands of resources or tools cannot stall a run (the
#: listings themselves are bounded by the engine's page cap, `RunOptions.list_page_cap`).
MAX_RESOURCE_READS = 25
MAX_TOOL_CALLS = 10
MAX_FILE_BYTES = 16 * 1024 * 1024


#: The profile's well-known names for the document's resource (name or URI) and for its tool.
WELL_KNOWN_RESOURCE = re.compile(r"mcp[-_/.]?discovery", re.IGNORECASE)
WELL_KNOWN_TOOLS = re.compile(r"^(describe_mcp_surface|(get_)?mcp_discovery)$", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    where: str
    configured: bool
    arguments: dict[str, Any] = field(default_factory=dict)
    #: Found by its well-known name, not by the `schema` marker of its body.
    by_name: bool = False

    def describe(self) -> str:
        how = "configured" if self.configured else "found by its well-known name" if self.by_name else "found"
        return f"{how} {self.kind} {self.where!r}"


class Refused(Exception):
    """The `[dw-discovery]` configuration is one the harness will not act on (ERROR, once)."""


def refuse(message: str) -> NoReturn:
    raise Refused(message)


@dataclass
class Found:
    """The outcome of looking for the document: a document, a broken declared location, or nothing."""

    source: Source | None = None
    #: Why the harness refused the configuration (a malformed table, a URL off the target's origin).
    refused: str | None = None
    document: Any = None
    #: Why the body is not JSON (DWD-DOC-001), when a body arrived.
    parse_error: str | None = None
    #: Why a configured location delivered no body at all.
    problem: str | None = None
    looked_for: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


def settings(ctx: CaseContext) -> dict[str, Any]:
    """The `[dw-discovery]` table of the target file, type-checked; a malformed table is ERROR."""
    table = ctx.target.settings.get(TABLE, {})
    if not isinstance(table, dict):
        refuse(f"[{TABLE}] in the target file must be a table")
    for key in _STRING_KEYS:
        if key in table and not isinstance(table[key], str):
            refuse(f"[{TABLE}] {key} must be a string")
    if "tool_arguments" in table and not isinstance(table["tool_arguments"], dict):
        refuse(f"[{TABLE}] tool_arguments must be a table")
    previews = table.get("preview_arguments")
    if previews is not None and not (
        isinstance(previews, dict)
        or (isinstance(previews, list) and all(isinstance(p, dict) for p in previews))
    ):
        refuse(f"[{TABLE}] preview_arguments must be a table or an array of tables")
    smoke = table.get("smoke_arguments")
    if smoke is not None and not (
        isinstance(smoke, dict) and all(isinstance(v, dict) for v in smoke.values())
    ):
        refuse(f"[{TABLE}] smoke_arguments must be a table of tables (tool name -> arguments)")
    unknown = sorted(set(table) - set(_KNOWN_KEYS))
    if unknown:
        refuse(f"[{TABLE}] has unknown keys {unknown}; known: {', '.join(_KNOWN_KEYS)}")
    return dict(table)


def local_path(ctx: CaseContext, name: str) -> Path:
    """A configured file path: relative ones are taken from the target's cwd (else the harness's)."""
    path = Path(name)
    if not path.is_absolute() and ctx.target.cwd:
        path = Path(ctx.target.cwd) / path
    return path


def parse_json(text: str) -> tuple[Any, str | None]:
    """Strict JSON: NaN and Infinity are not JSON, whatever Python's parser allows."""

    def reject(token: str) -> Any:
        raise ValueError(f"{token} is not a JSON value")

    try:
        return json.loads(text, parse_constant=reject), None
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON: {exc}"[:300]


async def list_all(ctx: CaseContext, method: str, key: str) -> tuple[list[dict[str, Any]], str]:
    """Every object of a paginated list and why it is incomplete ("" if it is not): the engine's
    listing (`ctx.list_all`), fetched once per (target, revision) whoever asks, with its page cap."""
    found = await ctx.list_all(method, key, attach=False)
    problem = found.problem
    if problem and found.calls and not isinstance(found.calls[-1].result, dict):
        problem = f"{method} was not answered with a result (error {found.calls[-1].error_code!r})"
    elif problem:
        problem = f"{method}: {problem}"
    return found.objects(), problem


def read_only(tool: dict[str, Any]) -> bool:
    """Annotated `readOnlyHint: true` (the engine's reading, `conformance.engine.policy`)."""
    return core_read_only(tool)


def may_call(ctx: CaseContext, tool: dict[str, Any]) -> bool:
    """The run's tool-call policy (`ctx.may_call`): read-only tools by default, all with --call-tools all."""
    return ctx.may_call(tool)


def tool_payload(result: Any) -> tuple[Any, str | None]:
    """What a tool result carries as JSON (G-D5): structuredContent, else the first JSON text block."""
    if not isinstance(result, dict):
        return None, "no result object"
    if "structuredContent" in result:
        return result["structuredContent"], None
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            value, error = parse_json(block["text"])
            if error is None:
                return value, None
    return None, "neither structuredContent nor a text block holding JSON"


async def find_document(ctx: CaseContext) -> Found:
    """Locate and parse the document once per (target, revision)."""
    if "dw:found" not in ctx.shared:
        try:
            ctx.shared["dw:found"] = await _find(ctx)
        except Refused as exc:
            ctx.shared["dw:found"] = Found(refused=str(exc))
    found: Found = ctx.shared["dw:found"]
    return found


async def _find(ctx: CaseContext) -> Found:
    table = settings(ctx)
    kinds: tuple[SourceKind, ...] = ("resource", "url", "tool", "file")
    for kind in kinds:
        if kind in table:
            arguments = dict(table.get("tool_arguments", {})) if kind == "tool" else {}
            source = Source(kind, table[kind], configured=True, arguments=arguments)
            found = Found(source=source, looked_for=[source.describe()])
            text, value, problem, evidence = await fetch(ctx, source)
            found.evidence = evidence
            if problem is not None:
                found.problem = problem
            elif text is not None:
                found.document, found.parse_error = parse_json(text)
            else:
                found.document = value
            return found
    found = Found()
    named: list[Found] = []
    await _search_resources(ctx, found, named)
    if found.source is None:
        await _search_tools(ctx, found, named)
    if found.source is None and named:
        candidate = named[0]
        candidate.looked_for = found.looked_for
        return candidate
    return found


def _named(source: Source, text: str | None, value: Any, evidence: dict[str, Any]) -> Found:
    """A candidate found by its well-known name: judged whatever its marker says."""
    named = replace(source, by_name=True)
    candidate = Found(source=named, evidence=evidence)
    if text is not None:
        candidate.document, candidate.parse_error = parse_json(text)
    else:
        candidate.document = value
    return candidate


async def fetch(ctx: CaseContext, source: Source) -> tuple[str | None, Any, str | None, dict[str, Any]]:
    """One fetch from `source`: (body text, or an already-parsed value; problem; evidence)."""
    if source.kind == "resource":
        call = await ctx.request("resources/read", {"uri": source.where})
        text, problem = _resource_text(call.result, call.error_code)
        return text, None, problem, dict(call.excerpt())
    if source.kind == "tool":
        call = await ctx.request("tools/call", {"name": source.where, "arguments": source.arguments})
        if not isinstance(call.result, dict):
            return (
                None,
                None,
                f"tools/call {source.where!r} failed (error {call.error_code!r})",
                dict(call.excerpt()),
            )
        if call.result.get("isError") is True:
            return None, None, f"tools/call {source.where!r} returned isError: true", dict(call.excerpt())
        value, problem = tool_payload(call.result)
        return None, value, problem, dict(call.excerpt())
    if source.kind == "url":
        return await _fetch_url(ctx, source.where)
    return _read_file(ctx, source.where)


def _resource_text(result: Any, error_code: Any) -> tuple[str | None, str | None]:
    if not isinstance(result, dict):
        return None, f"resources/read failed (error {error_code!r})"
    contents = result.get("contents")
    if not isinstance(contents, list) or not contents or not isinstance(contents[0], dict):
        return None, "resources/read returned no contents"
    item = contents[0]
    if isinstance(item.get("text"), str):
        return item["text"], None
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True).decode("utf-8"), None
        except (binascii.Error, ValueError):
            return None, "resources/read returned a blob that is not base64 of UTF-8 text"
    return None, "resources/read returned contents with neither text nor blob"


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(ctx: CaseContext, url: str) -> None:
    """Refuse a URL off the target's origin (HTTP targets) or off loopback (stdio targets): ERROR."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        refuse(f"[{TABLE}] url {url!r} is not an http(s) URL with a host")
    if ctx.target.url:
        if _origin(url) != _origin(ctx.target.url):
            refuse(
                f"[{TABLE}] url {url!r} is not on the target's origin "
                f"{'{}://{}:{}'.format(*_origin(ctx.target.url))}; the harness fetches nothing else"
            )
    elif not _loopback(parts.hostname):
        refuse(f"[{TABLE}] url {url!r}: a stdio target's discovery URL must be on a loopback address")


async def _fetch_url(ctx: CaseContext, url: str) -> tuple[str | None, Any, str | None, dict[str, Any]]:
    import httpx  # here, not at import time: `list` and `explain` load suites and must stay light

    check_url(ctx, url)
    headers = dict(ctx.target.headers) if ctx.target.url else {}
    headers["Accept"] = "application/json"
    limit = ctx.target.max_message_bytes
    try:
        async with (
            httpx.AsyncClient(timeout=ctx.options.timeout, follow_redirects=False) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body.extend(chunk)
                if len(body) > limit:
                    return None, None, f"GET {url} sent more than {limit} bytes", {"url": url}
    except httpx.HTTPError as exc:
        return None, None, f"GET {url} failed: {type(exc).__name__}: {exc}"[:300], {"url": url}
    evidence = {
        "url": url,
        "http_status": response.status_code,
        "content_type": response.headers.get("content-type", ""),
        "body": bytes(body[:1500]).decode("utf-8", errors="replace"),
    }
    if response.status_code != 200:
        return None, None, f"GET {url} answered HTTP {response.status_code}", evidence
    try:
        return bytes(body).decode("utf-8"), None, None, evidence
    except UnicodeDecodeError as exc:
        return None, None, f"GET {url}: the body is not UTF-8 (byte {exc.start})", evidence


def _read_file(ctx: CaseContext, name: str) -> tuple[str | None, Any, str | None, dict[str, Any]]:
    path = local_path(ctx, name)
    try:
        data = path.read_bytes()[: MAX_FILE_BYTES + 1]
    except OSError as exc:
        refuse(f"[{TABLE}] file {name!r} cannot be read: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        refuse(f"[{TABLE}] file {name!r} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8"), None, None, {"file": name}
    except UnicodeDecodeError as exc:
        return None, None, f"file {name!r} is not UTF-8 (byte {exc.start})", {"file": name}


def _carries_id(value: Any) -> bool:
    return isinstance(value, dict) and value.get("schema") == SCHEMA_ID


def _well_known_resource(resource: dict[str, Any]) -> bool:
    return any(
        isinstance(resource.get(key), str) and WELL_KNOWN_RESOURCE.search(resource[key])
        for key in ("uri", "name")
    )


async def _search_resources(ctx: CaseContext, found: Found, named: list[Found]) -> None:
    if not ctx.identity.has("resources"):
        found.looked_for.append("MCP resources (the server offers no resources capability)")
        return
    resources, problem = await list_all(ctx, "resources/list", "resources")
    candidates = [
        r
        for r in resources
        if isinstance(r.get("uri"), str) and (is_json_mime(r.get("mimeType")) or _well_known_resource(r))
    ]
    found.looked_for.append(
        f"MCP resources with a JSON mimeType whose body has schema {SCHEMA_ID!r}, or named "
        f"mcp-discovery ({len(resources)} listed, {len(candidates)} read{'; ' + problem if problem else ''})"
    )
    for resource in candidates[:MAX_RESOURCE_READS]:
        source = Source("resource", resource["uri"], configured=False)
        text, _, _, evidence = await fetch(ctx, source)
        if text is None:
            continue
        value, error = parse_json(text)
        if error is None and _carries_id(value):
            found.source, found.document, found.evidence = source, value, evidence
            return
        if _well_known_resource(resource):
            named.append(_named(source, text, None, evidence))


def _tool_rank(tool: dict[str, Any]) -> int:
    """Try first the tools whose outputSchema pins the id, then the ones named like discovery."""
    output = tool.get("outputSchema")
    marker = output.get("properties", {}).get("schema", {}) if isinstance(output, dict) else {}
    if isinstance(marker, dict) and marker.get("const") == SCHEMA_ID:
        return 0
    if WELL_KNOWN_TOOLS.match(str(tool.get("name", ""))):
        return 1
    return 2 if "discover" in str(tool.get("name", "")).lower() else 3


def _no_required_arguments(tool: dict[str, Any]) -> bool:
    schema = tool.get("inputSchema")
    return isinstance(schema, dict) and not schema.get("required")


async def _search_tools(ctx: CaseContext, found: Found, named: list[Found]) -> None:
    if not ctx.identity.has("tools"):
        found.looked_for.append("tools (the server offers no tools capability)")
        return
    if ctx.options.call_tools == "none":
        found.looked_for.append("tools (not searched: tool calls are disabled with --call-tools none)")
        return
    tools, problem = await list_all(ctx, "tools/list", "tools")
    listed = [t for t in tools if isinstance(t.get("name"), str)]
    candidates = sorted(
        (
            t
            for t in listed
            if _no_required_arguments(t)
            and (read_only(t) or (WELL_KNOWN_TOOLS.match(t["name"]) and may_call(ctx, t)))
        ),
        key=_tool_rank,
    )
    uncallable = [t["name"] for t in listed if WELL_KNOWN_TOOLS.match(t["name"]) and t not in candidates]
    found.looked_for.append(
        f"tools annotated readOnlyHint: true without required arguments whose result carries schema "
        f"{SCHEMA_ID!r}, or named describe_mcp_surface or mcp_discovery ({len(candidates)} of "
        f"{len(tools)} tools, at most {MAX_TOOL_CALLS} called{'; ' + problem if problem else ''})"
        + (
            f"; not called ({'--call-tools ' + ctx.options.call_tools} policy, or a required argument): "
            + ", ".join(uncallable)
            if uncallable
            else ""
        )
    )
    for tool in candidates[:MAX_TOOL_CALLS]:
        source = Source("tool", tool["name"], configured=False)
        _, value, failed, evidence = await fetch(ctx, source)
        if failed is None and _carries_id(value):
            found.source, found.document, found.evidence = source, value, evidence
            return
        if failed is None and WELL_KNOWN_TOOLS.match(tool["name"]):
            named.append(_named(source, None, value, evidence))
