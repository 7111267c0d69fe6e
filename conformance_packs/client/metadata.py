"""2026-07-28's per-request metadata: `_meta` on every request, the version header on every POST and
their agreement, and the retry after an unsupported version (SEP-2575)."""

from __future__ import annotations

from conformance.pack_api import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    ClientContext,
    Message,
    client_check,
    missed,
)
from conformance_packs.client.common import params_of, sent, shape, shown

SCENARIO = "request-metadata"
STATELESS = ("2026-07-28",)
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


def _meta(message: Message) -> dict:
    meta = params_of(message.value).get("_meta")
    return meta if isinstance(meta, dict) else {}


@client_check(
    "client.metadata.version-header",
    "CLIENT-META-001",
    "every POST carries the MCP-Protocol-Version header",
    scenario=SCENARIO,
    revisions=STATELESS,
    transports=("http",),
)
async def version_header(ctx: ClientContext) -> None:
    posts = [a for a in ctx.recording.arrivals if a.method == "POST"]
    if not posts:
        ctx.absent("the client sent no POST")
    for post in posts:
        if "mcp-protocol-version" not in post.headers:
            missed(
                "a POST carried no MCP-Protocol-Version header", headers=dict(post.headers), body=post.body
            )


@client_check(
    "client.metadata.meta",
    "CLIENT-META-002",
    "every request carries _meta with the protocol version and the client's capabilities",
    scenario=SCENARIO,
    revisions=STATELESS,
)
async def request_meta(ctx: ClientContext) -> None:
    for message in sent(ctx, requests_only=True):
        problems = shape("requestMeta", params_of(message.value).get("_meta"))
        if problems:
            missed(
                f"the _meta of {message.method} does not carry what it must: " + "; ".join(problems),
                request=message.value,
            )


@client_check(
    "client.metadata.client-info",
    "CLIENT-META-003",
    "every request's _meta names the client",
    scenario=SCENARIO,
    revisions=STATELESS,
)
async def client_info(ctx: ClientContext) -> None:
    for message in sent(ctx, requests_only=True):
        if shape("implementation", _meta(message).get(META_CLIENT_INFO)):
            missed(
                f"the _meta of {message.method} names no client ({META_CLIENT_INFO})", request=message.value
            )


@client_check(
    "client.metadata.header-matches",
    "CLIENT-META-004",
    "the MCP-Protocol-Version header matches _meta's protocol version",
    scenario=SCENARIO,
    revisions=STATELESS,
    transports=("http",),
)
async def header_matches(ctx: ClientContext) -> None:
    both = [
        (m, m.arrival.headers["mcp-protocol-version"], _meta(m)[META_PROTOCOL_VERSION])
        for m in sent(ctx, requests_only=True)
        if "mcp-protocol-version" in m.arrival.headers and META_PROTOCOL_VERSION in _meta(m)
    ]
    if not both:
        ctx.absent(
            "no request carried both the header and _meta's version (CLIENT-META-001 and -002 judge that)"
        )
    for message, header, meta in both:
        if header != meta:
            missed(
                f"{message.method}: MCP-Protocol-Version {shown(header)} but _meta says {shown(meta)}",
                request=message.value,
            )
    ctx.note(f"checked {len(both)} requests ({META_CLIENT_CAPABILITIES} is CLIENT-META-002's)")


@client_check(
    "client.metadata.version-retry",
    "CLIENT-META-005",
    "a request refused as an unsupported version is retried with a supported one",
    scenario=SCENARIO,
    revisions=STATELESS,
)
async def version_retry(ctx: ClientContext) -> None:
    later = sent(ctx, requests_only=True)[1:]
    if not later:
        ctx.unless_failed("the client sent nothing after the refusal")
        missed("the client sent no request after its first was refused as an unsupported version")
    meta = _meta(later[0]).get(META_PROTOCOL_VERSION)
    if meta != "2026-07-28":  # the header's agreement with _meta is CLIENT-META-004's
        missed(
            f"the request after the refusal carried version {shown(meta)} in _meta, "
            "not the supported 2026-07-28",
            request=later[0].value,
        )
