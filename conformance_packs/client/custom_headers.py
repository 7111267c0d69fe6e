"""2026-07-28's custom headers from tool parameters (SEP-2243): an `x-mcp-header` parameter mirrored
into `Mcp-Param-{Name}` (numbers and booleans as text, unsafe strings Base64-encoded, null left out),
nothing else mirrored, and a tool whose annotation is invalid rejected."""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import partial
from typing import Any

from conformance.pack_api import ClientContext, Message, blocked, client_check, missed
from conformance_packs.client.common import shown
from conformance_packs.client.scenarios import INVALID_TOOLS, HttpCustomHeaders

SCENARIO = "http-custom-headers"
STATELESS = ("2026-07-28",)
PRESENT = "client.custom-headers.mirrored"
#: The prefix and suffix of a Base64-encoded header value.
SENTINEL = ("=?base64?", "?=")
_check = partial(client_check, scenario=SCENARIO, revisions=STATELESS, transports=("http",))


def _call(ctx: ClientContext, tool: str) -> Message:
    calls = [
        m for m in ctx.requests("tools/call") if isinstance(m.params, dict) and m.params.get("name") == tool
    ]
    if not calls:
        ctx.needs("tools/call", f"call {tool} with the context's arguments")
        ctx.absent(f"the client did not call {tool}")
    return calls[0]


def unsafe(text: str) -> bool:
    """A value that cannot go in a header as it is: outside printable ASCII, or padded with space."""
    return any(not 0x20 <= ord(c) <= 0x7E for c in text) or text != text.strip()


def _annotated(call: Message) -> list[tuple[str, str, Any, str | None]]:
    """(parameter, header, value, header as sent) of each annotated parameter of the call."""
    tool = call.params.get("name")
    schema: Any = next((t["inputSchema"] for t in HttpCustomHeaders.tools if t["name"] == tool), {})
    out = []
    for name, spec in schema.get("properties", {}).items():
        header = spec.get("x-mcp-header")
        if header is not None and name in (call.params.get("arguments") or {}):
            value = call.params["arguments"][name]
            out.append((name, header, value, call.arrival.headers.get(f"mcp-param-{header.lower()}")))
    return out


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@_check(
    PRESENT,
    "CLIENT-HDR-003",
    "each x-mcp-header parameter given a value is mirrored into Mcp-Param-{Name}",
)
async def mirrored(ctx: ClientContext) -> None:
    call = _call(ctx, "test_custom_headers")
    for name, header, value, sent in _annotated(call):
        if value is None:
            continue
        if sent is None:
            missed(
                f"no Mcp-Param-{header} header for {name}={shown(value)}", headers=dict(call.arrival.headers)
            )
        if isinstance(value, str) and not unsafe(value) and decoded(sent) != value:
            missed(
                f"Mcp-Param-{header} is {shown(sent)}, not {name}'s {shown(value)}",
                headers=dict(call.arrival.headers),
            )
        if isinstance(value, str) and not unsafe(value) and sent != value:
            ctx.note(f"Mcp-Param-{header} carried {name}'s safe value {shown(value)} Base64-encoded")


def decoded(sent: str) -> str:
    """A header's value as the server reads it: the text inside `=?base64?...?=` decoded. Servers
    "MUST decode an encoded ... Mcp-Param-{Name} value before comparing it to the corresponding request
    body value"; the text obliges Base64 for unsafe values and forbids it for none (an empty value,
    which some HTTP stacks drop, may be sent encoded)."""
    inner = sent.removeprefix(SENTINEL[0]).removesuffix(SENTINEL[1])
    if (SENTINEL[0] + inner + SENTINEL[1]) != sent or len(sent) < len("".join(SENTINEL)):
        return sent
    try:
        return base64.b64decode(inner, validate=True).decode()
    except ValueError:
        return sent


@_check(
    "client.custom-headers.designated-only",
    "CLIENT-HDR-004",
    "no Mcp-Param header for a parameter without x-mcp-header",
)
async def designated_only(ctx: ClientContext) -> None:
    call = _call(ctx, "test_custom_headers")
    for header in ("mcp-param-query", "mcp-param-floatval", "mcp-param-float_val"):
        if header in call.arrival.headers:
            missed(
                f"the call carried {header} for an unannotated parameter", headers=dict(call.arrival.headers)
            )


def _encoded(ctx: ClientContext, applies: Callable[[Any], bool], wanted: Callable[[Any], str]) -> None:
    """Miss unless each annotated value `applies` is for was sent as `wanted(value)`; blocked by
    CLIENT-HDR-003 when its header is missing altogether."""
    call = _call(ctx, "test_custom_headers")
    for name, header, value, sent in _annotated(call):
        if not applies(value):
            continue
        if sent is None:
            blocked(PRESENT, f"no Mcp-Param-{header} header at all")
        if sent != wanted(value):
            missed(
                f"Mcp-Param-{header} is {shown(sent)} for {name}={shown(value)}, not {shown(wanted(value))}",
                headers=dict(call.arrival.headers),
            )


@_check(
    "client.custom-headers.values",
    "CLIENT-HDR-005",
    "a number or boolean parameter is mirrored as its JSON text",
)
async def values(ctx: ClientContext) -> None:
    _encoded(ctx, lambda value: isinstance(value, bool | int | float), _text)


@_check(
    "client.custom-headers.base64",
    "CLIENT-HDR-006",
    "a string a header cannot carry as it is is sent Base64-encoded",
)
async def base64_unsafe(ctx: ClientContext) -> None:
    _encoded(
        ctx,
        lambda value: isinstance(value, str) and unsafe(value),
        lambda value: "=?base64?" + base64.b64encode(value.encode()).decode() + "?=",
    )


@_check(
    "client.custom-headers.null-omitted",
    "CLIENT-HDR-007",
    "no Mcp-Param header for a parameter whose value is null",
)
async def null_omitted(ctx: ClientContext) -> None:
    call = _call(ctx, "test_custom_headers_null")
    said = call.arrival.headers.get("mcp-param-verbose")
    if said is not None:
        missed(
            f"Mcp-Param-Verbose: {shown(said)} was sent for verbose=null", headers=dict(call.arrival.headers)
        )


@client_check(
    "client.custom-headers.invalid-rejected",
    "CLIENT-HDR-008",
    "a tool whose x-mcp-header is invalid is not called, the valid ones still are",
    scenario="http-invalid-tool-headers",
    revisions=STATELESS,
    transports=("http",),
)
async def invalid_rejected(ctx: ClientContext) -> None:
    ctx.needs("tools/list", "list the tools")
    called = {str(m.params.get("name")) for m in ctx.requests("tools/call") if isinstance(m.params, dict)}
    wrong = sorted(called & set(INVALID_TOOLS))
    if wrong:
        rules = sorted({INVALID_TOOLS[name][0] for name in wrong})
        missed(
            f"the client called {', '.join(wrong)}, whose x-mcp-header breaks the rule(s) {', '.join(rules)}"
        )
    if "valid_tool" not in called:
        ctx.unless_failed("the client did not call valid_tool")
        ctx.miss_should(
            "the client did not call valid_tool: one invalid definition should not cost the valid tools"
        )
