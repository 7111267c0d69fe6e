"""The DNS-rebinding rule: a request from a foreign `Origin` is refused, not served.

Every revision with an HTTP transport says "Servers MUST validate the Origin header"; from 2025-11-25 on
the text also names the answer to an invalid one, 403 Forbidden. The probe sends a request the server
must otherwise answer (ping in a legacy session, server/discover in 2026-07-28) with
`Origin: http://evil.example`, an origin no server can call its own.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from conformance.pack_api import (
    Call,
    CaseContext,
    TransportError,
    TransportViolation,
    check,
    missed,
    unjudgeable,
)

#: The foreign origin of the probe (RFC 2606 reserves `.example`: it names no real site).
FOREIGN_ORIGIN = "http://evil.example"
#: Revisions whose text fixes the status of the refusal (403) and those that only require validation.
ORIGIN_403_REVISIONS = ("2025-11-25", "2026-07-28")
ORIGIN_VALIDATE_REVISIONS = ("2025-03-26", "2025-06-18")
#: Revisions a session over the legacy HTTP+SSE transport may negotiate beyond those of BASE-ORIGIN-002's
#: own check, whose Origin text is Streamable HTTP's only.
SSE_LATER_REVISIONS = ("2025-11-25", "2026-07-28")


async def _origin_call(ctx: CaseContext, origin: str) -> Call:
    """The probe request with `origin`, on the shared session (a refusal changes no state)."""
    session = await ctx.session()
    method = "server/discover" if ctx.era == "modern" else "ping"
    call = await session.request(method, headers={"Origin": origin})
    ctx.calls.append(call)
    return call


async def _foreign_origin_call(ctx: CaseContext) -> Call:
    return await _origin_call(ctx, FOREIGN_ORIGIN)


def _evidence(call: Call) -> dict[str, Any]:
    return {**call.excerpt(), "http_status": call.reply.status, "origin_sent": FOREIGN_ORIGIN}


@check(
    "base.origin.foreign-403",
    "BASE-ORIGIN-001",
    "a request with a foreign Origin is answered 403",
    transports=("http",),
    revisions=ORIGIN_403_REVISIONS,
)
async def foreign_origin_403(ctx: CaseContext) -> None:
    # A status with no JSON-RPC answer (500 text/plain), or no answer at all, is no 403: observed.
    with ctx.answer_judged(f"Origin {FOREIGN_ORIGIN} was not answered 403"):
        call = await _foreign_origin_call(ctx)
    status = call.reply.status
    if call.result is not None:
        missed(
            f"Origin {FOREIGN_ORIGIN} was served: HTTP {status} with a result, not 403 (no DNS-rebinding "
            "protection)",
            **_evidence(call),
        )
    if status != 403:
        missed(f"Origin {FOREIGN_ORIGIN} was refused with HTTP {status}, not 403", **_evidence(call))
    ctx.note(f"Origin {FOREIGN_ORIGIN}: HTTP 403")


@check(
    "base.origin.foreign-refused",
    "BASE-ORIGIN-002",
    "a request with a foreign Origin is refused",
    transports=("http", "sse"),
    revisions=("2024-11-05", *ORIGIN_VALIDATE_REVISIONS),
)
async def foreign_origin_refused(ctx: CaseContext) -> None:
    """These revisions require validation without naming the refusal's status: any HTTP error status
    refuses; a served request shows the Origin was not validated."""
    if ctx.transport == "sse":
        await _sse_foreign_origin(ctx)
        return
    try:
        call = await _foreign_origin_call(ctx)
    except TransportError as exc:
        if exc.status is None or exc.status < 400 or isinstance(exc, TransportViolation):
            raise
        # An HTTP error status with no JSON-RPC body (500 text/plain) refuses the request all the same.
        ctx.note(f"Origin {FOREIGN_ORIGIN}: refused with HTTP {exc.status} (no JSON-RPC answer)")
        return
    status = call.reply.status or 0
    if call.result is not None or status < 400:
        missed(
            f"Origin {FOREIGN_ORIGIN} was served: HTTP {status}"
            f"{' with a result' if call.result is not None else ''} (no DNS-rebinding protection)",
            **_evidence(call),
        )
    ctx.note(f"Origin {FOREIGN_ORIGIN}: refused with HTTP {status}")


@check(
    "base.origin.sse-foreign-refused",
    "BASE-ORIGIN-002",
    "a session over HTTP+SSE with a foreign Origin is refused",
    transports=("sse",),
    revisions=SSE_LATER_REVISIONS,
)
async def sse_foreign_origin_refused(ctx: CaseContext) -> None:
    """HTTP+SSE is 2024-11-05's transport, kept by later revisions only for backwards compatibility
    ("Continue to host both the SSE and POST endpoints of the old transport", 2025-11-25): a session over
    it, whatever revision it negotiates, is held to that transport's rule. 2025-11-25's 403 is Streamable
    HTTP's ("When implementing Streamable HTTP transport"), so no status is asked here either."""
    await _sse_foreign_origin(ctx)


async def _sse_foreign_origin(ctx: CaseContext) -> None:
    """HTTP+SSE (2024-11-05): open a whole session whose requests (its GET stream and POSTs) carry the
    foreign Origin. The session must not open."""
    try:
        session = await ctx.session_as({"headers": {"Origin": FOREIGN_ORIGIN}})
    except Exception as exc:  # every way of not opening is a refusal; the note says which
        ctx.note(f"a session with Origin {FOREIGN_ORIGIN} did not open: {exc}")
        return
    opening = session.identity.opening
    if opening is None:
        unjudgeable("the session with the foreign Origin opened without an opening call to show")
    missed(
        f"a whole session with Origin {FOREIGN_ORIGIN} was opened, its opening request answered (no "
        "DNS-rebinding protection)",
        **opening.excerpt(),
    )


@check(
    "base.origin.own-served",
    "BASE-ORIGIN-003",
    "a request whose Origin is the server's own is served",
    transports=("http",),
    revisions=(*ORIGIN_VALIDATE_REVISIONS, *ORIGIN_403_REVISIONS),
)
async def own_origin_served(ctx: CaseContext) -> None:
    """The origin of the URL the server is reached at (a loopback one for a local server): what a page
    the server itself serves would send. Validation refuses foreign origins; this one is valid by any
    reading, and a server that refuses it refuses every browser-based client of its own."""
    adapter = await ctx.http_adapter()
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    url = urlsplit(adapter.url)
    origin = f"{url.scheme}://{url.netloc}"
    try:
        call = await _origin_call(ctx, origin)
    except TransportError as exc:
        if exc.status is None or exc.status < 400:
            raise
        # Any HTTP error status refuses it, with a JSON-RPC body or none (a 403 text/plain, say).
        missed(f"Origin {origin} (the server's own) was refused with HTTP {exc.status}", origin_sent=origin)
    if call.result is None:
        missed(
            f"Origin {origin} (the server's own) was not served: "
            + (call.drew() if call.reply.response is None else f"HTTP {call.reply.status}, {call.drew()}"),
            **{**call.excerpt(), "http_status": call.reply.status},
            origin_sent=origin,
        )
    ctx.note(f"Origin {origin}: served (HTTP {call.reply.status})")
