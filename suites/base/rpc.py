"""JSON-RPC envelope checks: version field, id echo, result xor error, error shape, error codes."""

from __future__ import annotations

import asyncio
from typing import Any

from conformance import vectors
from conformance.engine.checks import check, missed, unjudgeable, weak
from conformance.engine.context import CaseContext
from conformance.protocol import jsonrpc
from conformance.protocol.session import Call
from conformance.schemas import shape_errors
from conformance.text import bytes_text

#: How long to wait for an answer to a malformed message before calling it unanswered.
MALFORMED_WAIT = 3.0
#: Seconds to let a duplicated null-id answer arrive before the next request is sent.
DUPLICATE_GRACE = 0.05


async def _sample(ctx: CaseContext) -> list[Call]:
    """A few answered requests of both outcomes: a listing and an unknown method."""
    return [await ctx.request("tools/list"), await ctx.request("conformance/no-such-method")]


def _responses(calls: list[Call]) -> list[tuple[Call, Any]]:
    out = []
    for call in calls:
        if call.reply.response is None:
            unjudgeable("a request got no response frame", **call.excerpt())
        out.append((call, call.response))
    return out


@check("base.rpc.version-field", "BASE-RPC-001", "responses carry jsonrpc 2.0")
async def version_field(ctx: CaseContext) -> None:
    for call, value in _responses(await _sample(ctx)):
        if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
            got = value.get("jsonrpc", "(absent)") if isinstance(value, dict) else type(value).__name__
            missed(f'response has jsonrpc {got!r}, not "2.0"', **call.excerpt())


@check("base.rpc.id-echo", "BASE-RPC-002", "responses echo the request id")
async def id_echo(ctx: CaseContext) -> None:
    session = await ctx.session()
    for msg_id in (session.next_id() + 1000, f"conformance-{session.next_id()}"):
        call = await ctx.request("tools/list", msg_id=msg_id)
        value = call.response
        if not isinstance(value, dict) or "id" not in value:
            missed(f"response to id {msg_id!r} has no id", **call.excerpt())
        got = value["id"]
        if got != msg_id or type(got) is not type(msg_id):
            missed(
                f"sent id {msg_id!r} ({type(msg_id).__name__}), got {got!r} ({type(got).__name__})",
                **call.excerpt(),
            )


@check("base.rpc.result-xor-error", "BASE-RPC-003", "exactly one of result and error")
async def result_xor_error(ctx: CaseContext) -> None:
    for call, value in _responses(await _sample(ctx)):
        if not isinstance(value, dict) or (("result" in value) == ("error" in value)):
            missed("a response must have exactly one of result and error", **call.excerpt())


@check("base.rpc.error-shape", "BASE-RPC-004", "error objects have integer code and string message")
async def error_shape(ctx: CaseContext) -> None:
    call = await ctx.request("conformance/no-such-method")
    error = call.error
    if error is None:
        missed("an unknown method was not answered with an error", **call.excerpt())
    problems = shape_errors("error", error, ctx.era)
    if problems:
        missed("; ".join(problems), **call.excerpt())


async def _send_malformed(ctx: CaseContext, raw: bytes, expect_id: Any) -> Call:
    """Send exact bytes; an unanswered probe is a miss only if the server still answers afterwards."""
    session = await ctx.session()
    headers = session.headers_for("tools/list", None)
    try:
        call = await session.send(None, expect_id=expect_id, timeout=MALFORMED_WAIT, raw=raw, headers=headers)
    except Exception:
        # No answer at all: the server must still be alive for the verdict to be a FAIL, not an outage.
        ctx.pool.broken = False
        try:
            await ctx.request("tools/list")
        except Exception:
            ctx.pool.broken = True
            raise
        missed(f"no answer within {MALFORMED_WAIT:g} s to `{bytes_text(raw, 80)}`")
    ctx.calls.append(call)
    # An answer with id null cannot be told from a duplicate of itself by id: give a duplicate a moment
    # to arrive, so the next send discards it instead of taking it for its own answer.
    if ctx.transport != "http":  # each HTTP POST carries its own answer: no duplicate can leak
        await asyncio.sleep(DUPLICATE_GRACE)
    return call


def _refused_by_http_status(ctx: CaseContext, call: Call, vector: dict[str, Any]) -> bool:
    """Over HTTP a rejected body is an HTTP error status; the JSON-RPC error body is only a MAY.

    2025-06-18 transports: "If the server cannot accept the input, it MUST return an HTTP error status
    code (e.g., 400 Bad Request). The HTTP response body MAY comprise a JSON-RPC error response".
    """
    status = call.reply.status
    if ctx.transport in ("http", "sse") and status is not None and 400 <= status < 500 and call.error is None:
        ctx.note(f"{vector['id']}: refused with HTTP {status} and no JSON-RPC error body")
        return True
    return False


def _probes(requirement: str) -> list[dict[str, Any]]:
    return [v for v in vectors.load("base", "envelope-probes.json") if v["requirement"] == requirement]


async def _run_probe(ctx: CaseContext, vector: dict[str, Any]) -> tuple[Call, Any]:
    session = await ctx.session()
    msg_id = session.next_id()
    raw = vector["send"].replace("{id}", str(msg_id)).encode("utf-8")
    call = await _send_malformed(ctx, raw, expect_id=None if vector["expect_null_id"] else msg_id)
    return call, msg_id


@check("base.rpc.parse-error", "BASE-RPC-005", "malformed JSON is answered with -32700")
async def parse_error(ctx: CaseContext) -> None:
    for vector in _probes("BASE-RPC-005"):
        call, _ = await _run_probe(ctx, vector)
        if _refused_by_http_status(ctx, call, vector):
            continue
        if call.error_code != jsonrpc.PARSE_ERROR:
            missed(f"{vector['id']}: expected error code -32700, got {call.error_code!r}", **call.excerpt())
        value = call.response
        if isinstance(value, dict) and value.get("id") is not None:
            missed(
                f"{vector['id']}: a parse error response must have id null, got {value.get('id')!r}",
                **call.excerpt(),
            )


@check("base.rpc.invalid-request", "BASE-RPC-006", "an invalid request is answered with -32600")
async def invalid_request(ctx: CaseContext) -> None:
    for vector in _probes("BASE-RPC-006"):
        call, _ = await _run_probe(ctx, vector)
        if call.result is not None:
            missed(f"{vector['id']}: an invalid request was answered with a result", **call.excerpt())
        if _refused_by_http_status(ctx, call, vector):
            continue
        if call.error_code == jsonrpc.HEADER_MISMATCH and ctx.era == "modern" and ctx.transport == "http":
            ctx.note(f"{vector['id']}: refused as a header mismatch (no Mcp-Method header can mirror it)")
            continue
        if call.error_code != jsonrpc.INVALID_REQUEST:
            weak(
                f"{vector['id']}: refused, but with code {call.error_code!r} rather than -32600",
                **call.excerpt(),
            )


@check("base.rpc.method-not-found", "BASE-RPC-007", "an unknown method is answered with -32601")
async def method_not_found(ctx: CaseContext) -> None:
    call = await ctx.request("conformance/no-such-method")
    if call.error_code != jsonrpc.METHOD_NOT_FOUND:
        missed(f"expected error code -32601, got {call.error_code!r}", **call.excerpt())
