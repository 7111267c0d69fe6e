"""Streamable HTTP POST rules beyond the content type of an answer (BASE-HTTP-005): what a notification or
a response POSTed gets, the protocol-version header of legacy sessions, and the 2026-07-28 request
headers, unknown methods and envelope the server must hold a request to."""

from __future__ import annotations

import asyncio
from typing import Any

from conformance.pack_api import (
    Call,
    CaseContext,
    TransportError,
    blocked,
    check,
    jsonrpc,
    missed,
    skip,
    unjudgeable,
)
from conformance_packs.base.http import META_MISSING, meta_missing_answer

#: Revisions with a Streamable HTTP POST rule for notifications and responses (2024-11-05 has none).
STREAMABLE_REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: Legacy revisions that define the MCP-Protocol-Version header.
PROTOCOL_HEADER_REVISIONS = ("2025-06-18", "2025-11-25")
#: Requests POSTed at once by BASE-HTTP-023 (the official suite's three), and the prefix of their ids.
CONCURRENT = 3
CONCURRENT_ID = "conformance-concurrent"
#: A tool name no server lists: a request that named it and were processed calls nothing.
NO_SUCH_TOOL = "conformance-no-such-tool"


def _post_evidence(status: int | None, headers: dict[str, str], body: str) -> dict[str, Any]:
    return {"http_status": status, "headers": headers, "body": body[:300]}


async def _post_raw(
    ctx: CaseContext, message: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict, str]:
    """POST `message` on the shared session (its session id and protocol header) expecting no answer."""
    adapter = await ctx.http_adapter()
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    reply = await adapter.request(
        "POST", jsonrpc.encode(message), timeout=ctx.options.timeout, headers=headers
    )
    body = b"".join(frame.raw for frame in reply.frames).decode("utf-8", errors="replace")
    return reply.status or 0, reply.headers, body


def _accepted_or_refused(what: str, status: int, headers: dict[str, str], body: str) -> str:
    """The note for a conformant answer; a miss for 202 with a body, or any other 2xx/3xx status."""
    if status == 202:
        if body.strip():
            missed(
                f"{what}: HTTP 202 with a body (it must have none)", **_post_evidence(status, headers, body)
            )
        return f"{what}: HTTP 202, no body"
    if status >= 400:
        return f"{what}: refused with HTTP {status} (the server cannot accept it)"
    missed(
        f"{what}: HTTP {status}, neither 202 Accepted with no body nor an HTTP error status",
        **_post_evidence(status, headers, body),
    )


@check(
    "base.http.notification-202",
    "BASE-HTTP-010",
    "a notification POSTed is 202 with no body",
    transports=("http",),
    revisions=STREAMABLE_REVISIONS,
)
async def notification_202(ctx: CaseContext) -> None:
    # Cancelling a request that never existed: every server accepts it, none acts on it.
    params: dict[str, Any] = {"requestId": "conformance-never-sent", "reason": "conformance probe"}
    session = await ctx.session()
    if ctx.era == "modern":
        params["_meta"] = session.meta()
    message = jsonrpc.notification("notifications/cancelled", params)
    status, headers, body = await _post_raw(
        ctx, message, session.headers_for("notifications/cancelled", params)
    )
    ctx.note(_accepted_or_refused("notifications/cancelled", status, headers, body))


@check(
    "base.http.response-202",
    "BASE-HTTP-011",
    "a JSON-RPC response POSTed is 202 with no body",
    eras=("legacy",),
    transports=("http",),
    revisions=STREAMABLE_REVISIONS,
)
async def response_202(ctx: CaseContext) -> None:
    """An answer to a request the server never sent: it may accept it (202) or refuse it (an error
    status); a 200 with a body, or any other success, is neither."""
    message = {"jsonrpc": "2.0", "id": "conformance-never-asked", "result": {}}
    status, headers, body = await _post_raw(ctx, message, {})
    ctx.note(_accepted_or_refused("a response to a request never sent", status, headers, body))


def _expect_refusal(call: Call, status: int, code: int | None, what: str) -> None:
    if call.result is not None:
        missed(f"{what}: the request was processed (a result came back)", **call.excerpt())
    if call.reply.status != status:
        missed(f"{what}: HTTP {call.reply.status}, not {status}", **call.excerpt())
    if code is not None and call.error_code != code:
        missed(f"{what}: {call.drew()}, not error {code}", **call.excerpt())


@check(
    "base.http.legacy-bad-protocol-header",
    "BASE-HTTP-012",
    "an unsupported MCP-Protocol-Version header is 400",
    eras=("legacy",),
    transports=("http",),
    revisions=PROTOCOL_HEADER_REVISIONS,
)
async def legacy_bad_protocol_header(ctx: CaseContext) -> None:
    session = await ctx.session()
    call = await session.request("ping", headers={"MCP-Protocol-Version": "1999-01-01"})
    ctx.calls.append(call)
    _expect_refusal(call, 400, None, "ping with MCP-Protocol-Version 1999-01-01")
    ctx.note("MCP-Protocol-Version 1999-01-01: HTTP 400")


@check(
    "base.http.unknown-method-404",
    "BASE-HTTP-013",
    "an unknown method is 404 with -32601",
    eras=("modern",),
    transports=("http",),
)
async def unknown_method_404(ctx: CaseContext) -> None:
    # ctx.request: an answer in a content type no request may get is BASE-HTTP-005's to judge, and
    # this case is then blocked by it, as the other cases that need the JSON-RPC error are.
    call = await ctx.request("conformance/no-such-method")
    _expect_refusal(call, 404, jsonrpc.METHOD_NOT_FOUND, "conformance/no-such-method")


@check(
    "base.http.method-header-required",
    "BASE-HTTP-014",
    "a request without Mcp-Method is 400 with -32020",
    eras=("modern",),
    transports=("http",),
)
async def method_header_required(ctx: CaseContext) -> None:
    session = await ctx.session()
    call = await session.request("server/discover", headers={"Mcp-Method": None})  # type: ignore[dict-item]
    ctx.calls.append(call)
    _expect_refusal(call, 400, jsonrpc.HEADER_MISMATCH, "server/discover without an Mcp-Method header")


@check(
    "base.http.name-header-matched",
    "BASE-HTTP-015",
    "Mcp-Name missing or not matching the body is 400 with -32020",
    eras=("modern",),
    transports=("http",),
)
async def name_header_matched(ctx: CaseContext) -> None:
    """tools/call of a tool no server has: a server that let the header pass answers the unknown tool,
    so nothing is ever called, whatever `--call-tools` allows."""
    session = await ctx.session()
    params = {"name": NO_SUCH_TOOL, "arguments": {}}
    for what, header in (("another name", "conformance-other-tool"), ("no Mcp-Name header", None)):
        call = await session.request("tools/call", params, headers={"Mcp-Name": header})  # type: ignore[dict-item]
        ctx.calls.append(call)
        _expect_refusal(call, 400, jsonrpc.HEADER_MISMATCH, f"tools/call of {NO_SUCH_TOOL!r} with {what}")
    ctx.note(f"tools/call of {NO_SUCH_TOOL!r}: a mismatched and a missing Mcp-Name each 400 with -32020")


@check(
    "base.http.meta-required",
    "BASE-HTTP-016",
    "a request missing a required _meta field is 400 with -32602",
    eras=("modern",),
    transports=("http",),
)
async def meta_required(ctx: CaseContext) -> None:
    call = await meta_missing_answer(ctx)
    if call.error_code != jsonrpc.INVALID_PARAMS:
        blocked(
            "base.modern.meta-required",
            f"{META_MISSING} drew {call.drew()}: BASE-MODERN-003 judges the answer, this row its status",
        )
    _expect_refusal(call, 400, None, META_MISSING)
    ctx.note(f"{META_MISSING}: HTTP 400")


@check(
    "base.http.method-value-case",
    "BASE-HTTP-017",
    "an Mcp-Method differing from the body only in case is 400 with -32020",
    eras=("modern",),
    transports=("http",),
)
async def method_value_case(ctx: CaseContext) -> None:
    session = await ctx.session()
    call = await session.request("server/discover", headers={"Mcp-Method": "SERVER/DISCOVER"})
    ctx.calls.append(call)
    _expect_refusal(call, 400, jsonrpc.HEADER_MISMATCH, "server/discover with Mcp-Method: SERVER/DISCOVER")


@check(
    "base.http.no-server-requests",
    "BASE-HTTP-018",
    "no JSON-RPC request on a 2026-07-28 response stream",
    eras=("modern",),
    transports=("http",),
)
async def no_server_requests(ctx: CaseContext) -> None:
    """Judged over every answer of this revision so far (the cases before it and its own listing)."""
    await ctx.request("tools/list" if ctx.identity.has("tools") else "server/discover")
    messages = 0
    for entry in ctx.wire_log():
        channel = str(entry.get("channel", ""))
        if entry.get("dir") != "recv" or "text" not in entry or "truncated_from" in entry:
            continue
        if not (channel.startswith("sse:") or channel == "body"):
            continue
        messages += 1
        frame = jsonrpc.classify(entry["text"].encode("utf-8"))
        if frame.kind == "request":
            missed(
                f"the server sent a JSON-RPC request in an HTTP answer: {entry['text'][:200]!r}",
                method=frame.value.get("method"),
            )
    ctx.note(f"{messages} messages in HTTP answers, none a request")


@check(
    "base.http.concurrent-posts",
    "BASE-HTTP-023",
    "several requests POSTed at once are each answered",
    transports=("http",),
    revisions=STREAMABLE_REVISIONS,
)
async def concurrent_posts(ctx: CaseContext) -> None:
    """A request every server answers (ping in a legacy session, server/discover in 2026-07-28), POSTed
    CONCURRENT times at once on separate requests: each must get its own answer, as one alone does."""
    session = await ctx.session()
    method = "server/discover" if ctx.era == "modern" else "ping"
    ids = [f"{CONCURRENT_ID}-{n}" for n in range(CONCURRENT)]
    done = await asyncio.gather(*(session.request(method, msg_id=i) for i in ids), return_exceptions=True)
    refused: list[str] = []
    statuses: list[int | None] = []
    for msg_id, outcome in zip(ids, done, strict=True):
        if isinstance(outcome, TransportError):
            refused.append(f"{msg_id}: {outcome}")
            statuses.append(outcome.status)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            ctx.calls.append(outcome)
            statuses.append(outcome.reply.status)
            if outcome.result is None:
                refused.append(f"{msg_id}: {outcome.drew()}")
    if refused:
        missed(
            f"{len(refused)} of {CONCURRENT} {method} requests POSTed at once were not answered with a "
            "result: " + "; ".join(refused),
            statuses=statuses,
        )
    ctx.note(f"{CONCURRENT} {method} requests POSTed at once, each answered with a result")


@check(
    "base.http.priming-event",
    "BASE-HTTP-024",
    "an SSE stream a POST opens starts with a priming event",
    eras=("legacy",),
    transports=("http",),
    revisions=("2025-11-25",),
)
async def priming_event(ctx: CaseContext) -> None:
    """tools/list (ping where the server has no tools), answered: a JSON answer opens no stream (SKIP);
    an event stream should carry an event with an ID and empty data before the answer's event."""
    call = await ctx.request("tools/list" if ctx.identity.has("tools") else "ping")
    if not (call.reply.content_type or "").startswith("text/event-stream"):
        skip(f"the request was answered with {call.reply.content_type or 'no content type'}: no SSE stream")
    ids = call.reply.event_ids
    answer = next((n for n, (_, frame) in enumerate(ids) if frame is call.reply.response), len(ids))
    primed = [event_id for event_id, frame in ids[:answer] if frame is None]
    if not primed:
        missed(
            "the SSE stream answering the request carried no event with an ID and empty data before the "
            f"answer (event IDs seen: {[event_id for event_id, _ in ids][:5]})",
            **call.excerpt(),
        )
    ctx.note(f"priming event ID {primed[0]!r} before the answer")


@check(
    "base.http.header-name-case",
    "BASE-HTTP-025",
    "the request headers are matched by name without regard to case",
    eras=("modern",),
    transports=("http",),
)
async def header_name_case(ctx: CaseContext) -> None:
    """server/discover with its two request headers named in another case than the text writes them
    (MCP-METHOD, mcp-protocol-version): the same request, which must be served as it is."""
    session = await ctx.session()
    headers = {"MCP-METHOD": "server/discover", "mcp-protocol-version": ctx.revision}
    call = await session.request("server/discover", headers=headers)
    ctx.calls.append(call)
    if call.result is None:
        missed(
            f"server/discover with the header names {sorted(headers)} drew {call.drew()}, not a result "
            f"(HTTP {call.reply.status})",
            **call.excerpt(),
        )
    ctx.note(f"header names {sorted(headers)}: served")
