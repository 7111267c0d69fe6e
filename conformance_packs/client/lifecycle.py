"""The legacy handshake as a client performs it: its initialize request, the initialized notification,
and the session's headers on every later HTTP request."""

from __future__ import annotations

from conformance.pack_api import TESTED_REVISIONS, ClientContext, blocked, client_check, missed, since, weak
from conformance_packs.client.common import negotiated, params_of, shape, shown

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@client_check(
    "client.lifecycle.initialize-params",
    "CLIENT-LIFE-001",
    "initialize is the first request, and its params are what the schema requires",
    scenario="initialize",
    revisions=LEGACY,
)
async def initialize_params(ctx: ClientContext) -> None:
    sent = ctx.needs("initialize", "open the session")
    messages = [m for m in ctx.recording.messages() if m.is_request]
    if messages and messages[0].method != "initialize":
        missed(
            f"the client's first request was {messages[0].method}, not initialize", request=messages[0].value
        )
    problems = shape("initializeParams", params_of(sent[0].value))
    if problems:
        missed("the initialize params do not match the schema: " + "; ".join(problems), request=sent[0].value)


@client_check(
    "client.lifecycle.version-offered",
    "CLIENT-LIFE-002",
    "initialize offers a protocol version: a revision of MCP, not necessarily the scenario's",
    scenario="initialize",
    revisions=LEGACY,
)
async def version_offered(ctx: ClientContext) -> None:
    """Which versions a client supports is not on the wire, nor which is its latest: a client offering
    a later revision than the scenario's is conformant (a server that has not that one answers with its
    own, and the client goes on if it supports that one). What can be judged is that the offer names
    a revision at all."""
    sent = ctx.needs("initialize", "open the session")
    offered = params_of(sent[0].value).get("protocolVersion")
    if not isinstance(offered, str):
        blocked("client.lifecycle.initialize-params", "initialize offered no protocol version string")
    if offered not in TESTED_REVISIONS:
        weak(
            f"initialize offered {shown(offered)}, which is no MCP revision the harness knows: "
            "no version the client can support",
            request=sent[0].value,
        )
    answered = ctx.recording.facts.get("protocol_version")
    ctx.note(f"offered {offered}; the scenario's server ({ctx.revision}) answered {answered}")


@client_check(
    "client.lifecycle.initialized",
    "CLIENT-LIFE-003",
    "notifications/initialized is sent after the initialize result",
    scenario="initialize",
    revisions=LEGACY,
)
async def initialized_sent(ctx: ClientContext) -> None:
    opened = ctx.needs("initialize", "open the session")
    sent = ctx.requests("notifications/initialized")
    if not sent:
        ctx.unless_failed("the client sent no notifications/initialized")
        missed("the client never sent notifications/initialized after the initialize result")
    if sent[0].arrival.t < opened[0].arrival.t:
        missed("notifications/initialized came before initialize", request=sent[0].value)
    if "id" in sent[0].value:
        missed("notifications/initialized was sent as a request (it has an id)", request=sent[0].value)


def _header_after_initialize(ctx: ClientContext, header: str, wanted: object) -> None:
    """Miss unless every POST after the one carrying initialize has `header` equal to `wanted`."""
    after: list[tuple[str, dict[str, str]]] = []
    opened = False
    for arrival in (a for a in ctx.recording.arrivals if a.method == "POST"):
        methods = [f.value.get("method") for f in arrival.frames() if isinstance(f.value, dict)]
        if opened:
            after.append((str(methods[0] if methods else "(answer)"), dict(arrival.headers)))
        opened = opened or "initialize" in methods
    if not after:
        ctx.absent("the client sent no HTTP request after initialize")
    for method, headers in after:
        said = headers.get(header.lower())
        if said != wanted:
            missed(
                f"the POST of {method} carried {header}: {shown(said)}, not {shown(wanted)}", headers=headers
            )


@client_check(
    "client.lifecycle.protocol-version-header",
    "CLIENT-LIFE-004",
    "every HTTP request after initialize carries MCP-Protocol-Version with the negotiated version",
    scenario="initialize",
    revisions=tuple(r for r in since("2025-06-18") if r in LEGACY),
    transports=("http",),
)
async def protocol_version_header(ctx: ClientContext) -> None:
    opened = ctx.needs("initialize", "open the session")
    _header_after_initialize(ctx, "MCP-Protocol-Version", negotiated(ctx, opened))


@client_check(
    "client.lifecycle.session-id-header",
    "CLIENT-LIFE-005",
    "every HTTP request after initialize carries the Mcp-Session-Id the server gave",
    scenario="initialize",
    revisions=tuple(r for r in since("2025-03-26") if r in LEGACY),
    transports=("http",),
)
async def session_id_header(ctx: ClientContext) -> None:
    ctx.needs("initialize", "open the session")
    _header_after_initialize(ctx, "Mcp-Session-Id", ctx.recording.facts.get("session_id"))
