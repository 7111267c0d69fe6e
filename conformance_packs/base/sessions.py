"""Legacy Streamable HTTP sessions (2025-03-26 to 2025-11-25): the `Mcp-Session-Id` a server assigns,
requests that leave it out, and a session ended by DELETE. Each check that changes a session works on
a session of its own, so the shared one stays as every other case expects it."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, Session, blocked, check, missed, skip, unjudgeable, weak

SESSION_REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25")


async def _http(ctx: CaseContext, session: Session) -> Any:
    adapter = await ctx.http_adapter(session)
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    return adapter


async def _session_id(ctx: CaseContext, session: Session) -> str:
    sid = (await _http(ctx, session)).session_id
    if not sid:
        skip("the server assigned no Mcp-Session-Id (sessions are optional): nothing to judge")
    return sid


def _visible_ascii(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(ch) <= 0x7E for ch in value)


@check(
    "base.session.id-visible-ascii",
    "BASE-SESS-001",
    "the Mcp-Session-Id holds only visible ASCII",
    eras=("legacy",),
    transports=("http",),
    revisions=SESSION_REVISIONS,
)
async def id_visible_ascii(ctx: CaseContext) -> None:
    session = await ctx.session()
    sid = await _session_id(ctx, session)
    if not _visible_ascii(sid):
        bad = sorted({f"U+{ord(ch):04X}" for ch in sid if not 0x21 <= ord(ch) <= 0x7E})
        missed(
            f"Mcp-Session-Id {sid[:80]!r} has characters outside 0x21-0x7E: {', '.join(bad[:8])}",
            session_id=sid[:200],
        )
    ctx.note(f"Mcp-Session-Id of {len(sid)} visible ASCII characters")


@check(
    "base.session.missing-id-400",
    "BASE-SESS-002",
    "a request without the Mcp-Session-Id is 400",
    eras=("legacy",),
    transports=("http",),
    revisions=SESSION_REVISIONS,
)
async def missing_id_400(ctx: CaseContext) -> None:
    session = await ctx.session()
    await _session_id(ctx, session)
    call = await session.request("ping", headers={"Mcp-Session-Id": None})  # type: ignore[dict-item]
    ctx.calls.append(call)
    status = call.reply.status
    if status != 400:
        processed = " and processed it (a result came back)" if call.result is not None else ""
        missed(
            f"a ping without the Mcp-Session-Id the server assigned got HTTP {status}{processed}, not 400",
            **call.excerpt(),
        )
    ctx.note("ping without Mcp-Session-Id: HTTP 400")


@check(
    "base.session.ended-404",
    "BASE-SESS-003",
    "requests on a session ended by DELETE are 404",
    eras=("legacy",),
    transports=("http",),
    revisions=SESSION_REVISIONS,
    fresh_sessions=1,
)
async def ended_404(ctx: CaseContext) -> None:
    session = await ctx.fresh_session()
    adapter = await _http(ctx, session)
    sid = await _session_id(ctx, session)
    deleted = await adapter.request("DELETE", timeout=ctx.options.timeout)
    evidence: dict[str, Any] = {"delete_status": deleted.status, "session_id": sid[:200]}
    if deleted.status == 405:
        skip("DELETE answered 405: the server does not let a client end its session (allowed)")
    if not 200 <= (deleted.status or 0) < 300 and deleted.status != 404:
        weak(f"DELETE of the session answered HTTP {deleted.status}: neither a success nor 405", **evidence)
    call = await session.request("ping")
    ctx.calls.append(call)
    if call.reply.status != 404:
        processed = " with a result" if call.result is not None else ""
        missed(
            f"after DELETE (HTTP {deleted.status}) a ping on the ended session got HTTP "
            f"{call.reply.status}{processed}, not 404",
            **evidence,
            **call.excerpt(),
        )
    ctx.note(f"DELETE: HTTP {deleted.status}; a ping on the ended session: HTTP 404")


@check(
    "base.session.reinitialize",
    "BASE-SESS-004",
    "a new initialize after a 404 opens a new session",
    eras=("legacy",),
    transports=("http",),
    revisions=SESSION_REVISIONS,
    fresh_sessions=1,
)
async def reinitialize(ctx: CaseContext) -> None:
    """What a client must do after the 404 (send a new initialize without a session id) must work: the
    same client, a new session id."""
    session = await ctx.fresh_session()
    adapter = await _http(ctx, session)
    old = await _session_id(ctx, session)
    deleted = await adapter.request("DELETE", timeout=ctx.options.timeout)
    if deleted.status == 405:
        skip("DELETE answered 405: the server does not let a client end its session (allowed)")
    gone = await session.request("ping")
    ctx.calls.append(gone)
    if gone.reply.status != 404:
        blocked("base.session.ended-404", f"the ended session was answered HTTP {gone.reply.status}, not 404")
    adapter.session_id = None
    adapter.protocol_header = None
    try:
        await session.open()
    except Exception as exc:  # any failure of the new handshake is the finding
        call = getattr(exc, "call", None)
        missed(
            f"after the 404 a new initialize without a session id failed: {exc}",
            **(call.excerpt() if call is not None else {}),
        )
    new = adapter.session_id
    if new == old:
        missed(f"the new initialize was given the ended session's id again: {old[:80]!r}")
    ctx.note(f"after the 404 a new initialize opened {'a new session' if new else 'a session without an id'}")
