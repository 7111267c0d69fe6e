"""Streamable HTTP rules: GET handling per era, header/body agreement, unsupported revisions, and the
content type every request is answered in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    LEGACY_REVISIONS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    Call,
    CaseContext,
    TransportTimeout,
    TransportViolation,
    blocked,
    check,
    jsonrpc,
    missed,
    recorded_violations,
    skip,
    unjudgeable,
)

#: The verdict needs only the status and content type of a GET; a stream is read this long, then closed.
GET_WINDOW = 0.05
#: A legacy session's GET, as `CaseContext.guard` remembers its failure: the GET-stream rows need it, and
#: a GET that drew no answer is met once, by BASE-HTTP-002, not waited out again by each of them nor in
#: another revision (how the server answers a GET does not depend on the revision's header).
LEGACY_GET = "base:legacy-get"
LEGACY_GET_WHAT = "a GET to the endpoint (BASE-HTTP-002)"


@check(
    "base.http.modern-get-405",
    "BASE-HTTP-001",
    "a 2026-07-28-only server answers GET with 405",
    eras=("modern",),
    transports=("http",),
)
async def modern_get_405(ctx: CaseContext) -> None:
    spoken = ctx.shared.get("spoken", [])
    if any(rev in spoken for rev in LEGACY_REVISIONS):
        skip("the server also speaks a legacy revision, whose GET stream rules apply instead")
    adapter = await ctx.http_adapter()
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    with ctx.answer_judged("GET was not answered 405"):
        reply = await adapter.request("GET", timeout=ctx.options.timeout, stream_window=GET_WINDOW)
    if reply.status != 405:
        missed(
            f"GET answered HTTP {reply.status} ({reply.content_type or 'no content type'}), not 405",
            http_status=reply.status,
            headers=reply.headers,
        )


@check(
    "base.http.legacy-get",
    "BASE-HTTP-002",
    "a legacy session's GET is an event stream or 405",
    eras=("legacy",),
    transports=("http",),
)
async def legacy_get(ctx: CaseContext) -> None:
    adapter = await ctx.http_adapter()
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    # The row's own test: a GET that is neither an event stream nor 405 FAILs, and a GET with no status
    # line within the timeout (fastapi-mcp buffers a whole stream) is neither: observed, not an ERROR.
    with ctx.answer_judged("the GET was answered neither with an event stream nor with 405"):
        reply = await _legacy_get_reply(ctx, adapter)
    if reply is None:
        ctx.note("no GET stream (405; its body did not end within the timeout)")
        return
    if reply.status == 405:
        ctx.note("no GET stream (405)")
        return
    if reply.status == 200 and reply.content_type.startswith("text/event-stream"):
        ctx.note("GET opened an event stream")
        return
    missed(
        f"GET answered HTTP {reply.status} with {reply.content_type or 'no content type'}",
        http_status=reply.status,
        headers=reply.headers,
    )


async def _legacy_get_reply(ctx: CaseContext, adapter: Any) -> Any:
    """The GET's answer (its status and headers; a stream is read for `GET_WINDOW`, then closed), None
    for a 405 whose body did not end within the timeout. A GET
    that draws none (no status line within the timeout) is remembered for the target: the GET-stream
    rows, and this row in the other revisions, are blocked by this case and send no GET of their own
    (`CaseContext.guard`), whatever verdict this case gives it."""
    async with ctx.guard(LEGACY_GET, LEGACY_GET_WHAT, across_revisions=True):
        try:
            return await adapter.request("GET", timeout=ctx.options.timeout, stream_window=GET_WINDOW)
        except TransportTimeout as exc:
            if exc.status != 405:
                raise
            return None  # 405, whose body did not end within the timeout: no GET stream, and no failure


def _expect_400(call: Call, code: int | None, what: str) -> None:
    """Refused with HTTP 400 and, when `code` is given, that JSON-RPC error code: each else a miss."""
    if call.result is not None:
        missed(f"{what}: the request was processed (a result came back)", **call.excerpt())
    if call.reply.status != 400:
        missed(f"{what}: HTTP {call.reply.status}, not 400", **call.excerpt())
    if code is not None and call.error_code != code:
        missed(f"{what}: {call.drew()}, not error {code}", **call.excerpt())


@check(
    "base.http.header-mismatch",
    "BASE-HTTP-003",
    "header and body disagreeing is 400 with -32020",
    eras=("modern",),
    transports=("http",),
)
async def header_mismatch(ctx: CaseContext) -> None:
    session = await ctx.session()
    probes = (
        ({"Mcp-Method": "tools/call"}, "Mcp-Method says tools/call for a tools/list body"),
        (
            {"MCP-Protocol-Version": "2025-11-25"},
            "MCP-Protocol-Version header 2025-11-25 with _meta 2026-07-28",
        ),
    )
    for headers, what in probes:
        call = await session.request("tools/list", headers=headers)
        ctx.calls.append(call)
        _expect_400(call, None, what)
        if call.error_code != jsonrpc.HEADER_MISMATCH:
            # The MUST is the 400 ("For HTTP, the response status code MUST be 400 Bad Request"); the
            # schema's -32020 is the error "Returned when a server rejects a request because" of the
            # mismatch, and a server that refused it for another reason (routing by the legacy header
            # to a session it lacks, say) broke no MUST: WARN, saying which code came back.
            ctx.soft_warn(f"{what}: refused with HTTP 400 but {call.drew()}, not HeaderMismatchError -32020")


@dataclass(frozen=True)
class Unsupported:
    """The answers to server/discover with a protocol version no server implements, sent once per
    (target, revision) on a session of its own: first, then again after two requests of the revision
    on the same session. What the cases before it did to the shared session never reaches it, so its
    verdict is the same whichever cases ran (`-k` alone or the whole pack); and a server that checks the
    version of a session's first requests only (as one TypeScript SDK v2 stdio server did) is still met,
    since 2026-07-28 carries the version on every request."""

    #: (when it was sent, the call): "first on a fresh session", "after two requests".
    calls: tuple[tuple[str, Call], ...]
    #: The wire entries of the exchange, attached to the case that did not send it.
    entries: list[dict[str, Any]]
    #: The case that sent it.
    by: str


async def unsupported_answer(ctx: CaseContext) -> Unsupported:
    async def send() -> Unsupported:
        mark = ctx.mark()
        session = await ctx.fresh_session()
        params = {"_meta": {**session.meta(), META_PROTOCOL_VERSION: UNSUPPORTED}}
        # Over Streamable HTTP the header says the same version as _meta (no header mismatch to judge).
        headers = {"MCP-Protocol-Version": UNSUPPORTED, "Mcp-Method": "server/discover"}

        async def unsupported() -> Call:
            return await session.request(
                "server/discover",
                params,
                envelope=False,
                headers=headers if ctx.transport == "http" else None,
            )

        try:
            first = await unsupported()
            # Two requests of the revision that are not server/discover: a declared list method where
            # there is one (a server may treat discovery apart from the session's other requests).
            lists = (("tools", "tools/list"), ("prompts", "prompts/list"))
            declared = [method for capability, method in lists if ctx.identity.has(capability)]
            for _ in range(2):
                await session.request(declared[0] if declared else "resources/list")
            later = await unsupported()
        finally:  # a stdio session of its own is a process: ended now, not with the revision
            await session.close()
        calls = (("first on a fresh session", first), ("after two other requests on its session", later))
        return Unsupported(calls, ctx.wire_since(mark), ctx.case_key)

    answer = await ctx.remember_once(
        "base:unsupported-revision", f"server/discover with protocol version {UNSUPPORTED}", send
    )
    ctx.calls.extend(call for _, call in answer.calls)
    if answer.by != ctx.case_key:
        ctx.attach(answer.entries)
    return answer


@check(
    "base.modern.unsupported-revision",
    "BASE-MODERN-002",
    "an unsupported protocol version is -32022 with data.supported",
    eras=("modern",),
)
async def unsupported_revision(ctx: CaseContext) -> None:
    for when, call in (await unsupported_answer(ctx)).calls:
        what = f"server/discover with protocol version {UNSUPPORTED} ({when})"
        if call.result is not None:
            missed(f"{what}: the request was processed (a result came back)", **call.excerpt())
        if call.error_code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
            missed(f"{what}: {call.drew()}, not error -32022", **call.excerpt())
        _supported_listed(call)
    ctx.note(f"protocol version {UNSUPPORTED}: -32022 with data.supported, first and after two requests")


@check(
    "base.http.unsupported-revision",
    "BASE-HTTP-004",
    "an unsupported protocol version is answered with HTTP 400",
    eras=("modern",),
    transports=("http",),
)
async def unsupported_revision_400(ctx: CaseContext) -> None:
    for when, call in (await unsupported_answer(ctx)).calls:
        if call.error_code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
            blocked(
                "base.modern.unsupported-revision",
                f"protocol version {UNSUPPORTED} ({when}) drew {call.drew()}, no "
                "UnsupportedProtocolVersionError: BASE-MODERN-002 judges the answer, this row its status",
            )
        if call.reply.status != 400:
            got = f"-32022 with HTTP {call.reply.status}"
            missed(f"protocol version {UNSUPPORTED} ({when}): {got}, not 400", **call.excerpt())
    ctx.note(f"protocol version {UNSUPPORTED}: HTTP 400")


#: A protocol version no server implements.
UNSUPPORTED = "2099-01-01"


def _supported_listed(call: Call) -> None:
    """UnsupportedProtocolVersionError's data.supported, the versions the client may retry with."""
    data = call.error.get("data") if isinstance(call.error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        missed(f"error.data.supported must be an array of strings, got {supported!r}", **call.excerpt())


# Over stdio (and the legacy SSE stream) the same two rules hold without the HTTP status: the 2026-07-28
# version negotiation ("it MUST respond with an UnsupportedProtocolVersionError listing the versions it
# does support") and the per-request _meta fields ("MUST reject it with JSON-RPC error code -32602";
# only "On HTTP, the response status MUST be 400") name no transport.


def _expect_error(call: Call, code: int, what: str) -> None:
    if call.result is not None:
        missed(f"{what}: the request was processed (a result came back)", **call.excerpt())
    if call.error_code != code:
        missed(f"{what}: error code {call.error_code!r}, not {code}", **call.excerpt())


#: The request BASE-MODERN-003 and BASE-HTTP-016 judge: the protocol version stays (over Streamable
#: HTTP the header agrees), the required clientCapabilities is left out.
META_MISSING = "server/discover without clientCapabilities in _meta"


async def meta_missing_answer(ctx: CaseContext) -> Call:
    """The answer to `META_MISSING`, sent once per (target, revision) whichever row asks first: the
    error code is MODERN-003's on every transport, the HTTP status BASE-HTTP-016's."""

    async def send() -> Call:
        params = {"_meta": {META_PROTOCOL_VERSION: ctx.revision}}
        return await (await ctx.session()).request("server/discover", params, envelope=False)

    call = await ctx.remember_once("base:meta-missing", META_MISSING, send)
    ctx.calls.append(call)
    return call


@check(
    "base.modern.meta-required",
    "BASE-MODERN-003",
    "a request missing a required _meta field is -32602",
    eras=("modern",),
)
async def meta_required_stream(ctx: CaseContext) -> None:
    call = await meta_missing_answer(ctx)
    _expect_error(call, jsonrpc.INVALID_PARAMS, META_MISSING)
    ctx.note(f"{META_MISSING}: -32602")


@check(
    "base.modern.client-info-optional",
    "BASE-MODERN-004",
    "a request whose _meta has no clientInfo is served",
    eras=("modern",),
)
async def client_info_optional(ctx: CaseContext) -> None:
    """server/discover with the two required _meta fields and no clientInfo, which the client only
    SHOULD send: refusing it changes behaviour on the field the server should not act on."""
    params = {"_meta": {META_PROTOCOL_VERSION: ctx.revision, META_CLIENT_CAPABILITIES: {}}}
    call = await (await ctx.session()).request("server/discover", params, envelope=False)
    ctx.calls.append(call)
    if call.result is None:
        missed(
            f"server/discover without clientInfo in _meta drew {call.drew()}, not a result", **call.excerpt()
        )
    ctx.note("server/discover without clientInfo in _meta: a result")


@dataclass
class _Answered:
    """One way of answering a request that broke the transport: a body it came with, and the methods
    so answered, each with the cases that met it."""

    body: str
    methods: dict[str, list[str]] = field(default_factory=dict)

    def met(self, method: str, case: str) -> None:
        self.methods.setdefault(method, []).append(case)

    def line(self, why: str) -> str:
        """`why` (the status and content type), the body in words, then who met it."""
        body = f" (body {self.body[:120]!r})" if self.body.strip() else " (no body)"
        met = [f"{m} (met by {', '.join(dict.fromkeys(cases))})" for m, cases in self.methods.items()]
        return f"{why}{body}, to {', '.join(met)}"


#: Requests every server must accept and answer: a listing, and a method it does not have.
ANSWER_PROBES = ("tools/list", "conformance/no-such-method")


@check(
    "base.http.request-answer",
    "BASE-HTTP-005",
    "a request is answered with application/json or an SSE stream",
    transports=("http",),
)
async def request_answer(ctx: CaseContext) -> None:
    """Judge the answers of this check's own probes and every answer an earlier case of this revision
    met (the runner runs this check last and names it in the cases it blocked)."""
    earlier = recorded_violations(ctx)
    # One line per way of answering (the status and content type, with a body seen): the same answer
    # to five methods, or met by five cases, is one defect, said once with every method and case.
    answers: dict[str, _Answered] = {}
    for seen in earlier:
        answered = answers.setdefault(seen["why"], _Answered(str(seen.get("body", ""))))
        answered.met(seen["method"], seen["case"])
    for method in ANSWER_PROBES:
        try:
            call = await ctx.request(method)
        except TransportViolation as exc:
            answers.setdefault(str(exc), _Answered(str(exc.evidence or ""))).met(method, "this case")
            continue
        if call.reply.violation:
            body = call.reply.frames[0].raw[:300].decode("utf-8", "replace") if call.reply.frames else ""
            answers.setdefault(call.reply.violation, _Answered(body)).met(method, "this case")
    if answers:
        lines = [answered.line(why) for why, answered in answers.items()]
        lead = f"{len(lines)} different answers broke the transport: " if len(lines) > 1 else ""
        evidence: dict[str, Any] = {"violations": earlier[:20]} if earlier else {}
        if ctx.calls and ctx.calls[-1].reply.violation:
            evidence.update(ctx.calls[-1].excerpt())
        missed(lead + "; ".join(lines), **evidence)
    ctx.note(f"{len(ANSWER_PROBES)} probes answered in application/json or text/event-stream")
