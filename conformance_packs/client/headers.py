"""2026-07-28's standard request headers: Mcp-Method on every POST, Mcp-Name on the requests that name a
tool, a resource or a prompt (SEP-2243)."""

from __future__ import annotations

from functools import partial

from conformance.pack_api import ClientContext, client_check, missed
from conformance_packs.client.common import sent, shown

SCENARIO = "http-standard-headers"
STATELESS = ("2026-07-28",)
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_check = partial(client_check, scenario=SCENARIO, revisions=STATELESS, transports=("http",))


@_check(
    "client.headers.method",
    "CLIENT-HDR-001",
    "every POST carries Mcp-Method with the body's method",
)
async def method_header(ctx: ClientContext) -> None:
    for message in sent(ctx, requests_only=False):
        said = message.arrival.headers.get("mcp-method")
        if said != message.method:
            missed(
                f"the POST of {message.method} carried Mcp-Method: {shown(said)}",
                headers=dict(message.arrival.headers),
            )


@_check(
    "client.headers.name",
    "CLIENT-HDR-002",
    "tools/call, resources/read and prompts/get carry Mcp-Name with what they name",
)
async def name_header(ctx: ClientContext) -> None:
    named = [m for m in sent(ctx, requests_only=False) if m.method in NAMED]
    if not named:
        ctx.absent("the client sent no tools/call, resources/read or prompts/get")
    for message in named:
        params = message.params if isinstance(message.params, dict) else {}
        wanted, said = params.get(NAMED[str(message.method)]), message.arrival.headers.get("mcp-name")
        if said != wanted:
            missed(
                f"the POST of {message.method} carried Mcp-Name: {shown(said)}, not {shown(wanted)}",
                headers=dict(message.arrival.headers),
            )
