"""JSON-RPC envelope checks: version field, id echo, result xor error, error shape, error codes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.pack_api import (
    Call,
    CaseContext,
    Probe,
    ProbeUnanswered,
    TransportError,
    blocked,
    bytes_text,
    check,
    jsonrpc,
    load_vectors,
    missed,
    shape_errors,
    skip,
    unjudgeable,
)


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
    """A result (a listing) and an error (an unknown method: over 2026-07-28's HTTP a 404), each asked
    with an integer id and a string id: an error answers its request as a result does."""
    session = await ctx.session()
    for method in ("tools/list", "conformance/no-such-method"):
        for msg_id in (session.next_id() + 1000, f"conformance-{session.next_id()}"):
            call = await ctx.request(method, msg_id=msg_id)
            value = call.response
            kind = "error" if call.error is not None else "response"
            if not isinstance(value, dict) or "id" not in value:
                missed(f"{kind} to {method} id {msg_id!r} has no id", **call.excerpt())
            got = value["id"]
            if got != msg_id or type(got) is not type(msg_id):
                missed(
                    f"{method}: sent id {msg_id!r} ({type(msg_id).__name__}), the {kind} has {got!r} "
                    f"({type(got).__name__})",
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
        # No MUST sentence requires an error for an unknown method (JSON-RPC's code table is
        # BASE-RPC-007's, a SHOULD): the one defect is judged there, not failed here too.
        skip("the unknown method's answer has no error object to judge (BASE-RPC-007 judges that answer)")
    problems = shape_errors("error", error, ctx.era)
    if problems:
        missed("; ".join(problems), **call.excerpt())


def _shown(raw: bytes, limit: int = 80) -> str:
    """The probe's bytes as readable text in backticks (`bytes_text`), never a repr."""
    return f"`{bytes_text(raw, limit)}`"


#: Per revision (`ctx.shared`): the server went deaf after a line that is not a valid message (`Deaf`).
DEAF = "base:rpc:deaf"


@dataclass(frozen=True)
class Deaf:
    """A stream server that answered neither a malformed line nor the sentinel after it within the
    request timeout, and did not exit: which check and probe saw it, and the wait it cost.

    Why remembered: a restart brings it back, but the next malformed line (the row's next probe, the
    other row's) would most likely cost the same wait again and tell nothing new. So the silence costs
    one bounded wait per revision: the probes left are not sent, and a later case that would send one
    is SKIP blocked by the case that saw it (one defect, one verdict)."""

    check_id: str
    vector: str
    shown: str
    why: str


async def _send_malformed(ctx: CaseContext, raw: bytes, expect_id: Any) -> Probe:
    """Send exact bytes and settle their silence with the session's sentinel (a bounded round trip).

    A target that ends its stream instead of answering is restarted for what follows (`ctx.session_broken()`).
    When the sentinel is not answered either, the TransportError propagates (`ProbeUnanswered` on a
    stream, which `_run_probe` judges) and the session is restarted.
    """
    session = await ctx.session()
    headers = session.headers_for("tools/list", None)
    try:
        probe = await session.probe(raw, expect_id=expect_id, headers=headers)
    except TransportError:
        ctx.session_broken()
        raise
    if probe.sentinel is not None:
        ctx.calls.append(probe.sentinel)
    ctx.calls.append(probe.call)  # the probe last: a verdict's evidence is its excerpt
    if probe.closed:
        ctx.session_broken()
    return probe


def _refused_by_http_status(ctx: CaseContext, call: Call, vector: dict[str, Any]) -> bool:
    """Over HTTP a rejected body is an HTTP error status; the JSON-RPC error body is only a MAY.

    2025-06-18 transports: "If the server cannot accept the input, it MUST return an HTTP error status
    code (e.g., 400 Bad Request). The HTTP response body MAY comprise a JSON-RPC error response".
    """
    status = call.reply.status
    if ctx.transport in ("http", "sse") and status is not None and status >= 400 and call.error is None:
        # A 5xx is an HTTP error status too: the MUST holds, though it says the server failed.
        kind = "a server error, " if status >= 500 else ""
        ctx.note(f"{vector['id']}: refused with HTTP {status} ({kind}no JSON-RPC error body)")
        return True
    return False


def _unanswered(
    ctx: CaseContext, probe: Probe, vector: dict[str, Any], raw: bytes, silent: list[str]
) -> None:
    """Judge a probe that drew no answer: over Streamable HTTP a MUST is broken; on a stream, no MUST is.

    Streamable HTTP: "If the server cannot accept the input, it MUST return an HTTP error status code".
    stdio and HTTP+SSE say nothing about a line that is not a message, and no official SDK answers one
    there: the probe joins `silent`, judged once by `_judge_silent`. A server that exited instead is
    judged by `_exited`.
    """
    if ctx.transport == "http":
        why = probe.failure or "no answer"
        missed(
            f"{vector['id']}: {_shown(raw)} drew neither a JSON-RPC answer nor an HTTP error status ({why})",
            **probe.call.excerpt(),
        )
    if probe.closed:
        _exited(ctx, probe, vector, raw)
        return
    if probe.sentinel is None or probe.sentinel.request is None:  # HTTP+SSE: the POST itself was refused
        silent.append(f"{_shown(raw)} ({vector['id']}; its POST answered HTTP {probe.call.reply.status})")
        return
    silent.append(
        f"{_shown(raw)} ({vector['id']}; the {probe.sentinel.request['method']} after it was answered)"
    )


def _judge_silent(ctx: CaseContext, silent: list[str], code: int) -> None:
    """One SHOULD-level miss for the probes a server ignored: WARN, and FAIL under `--strict`."""
    if silent:
        ctx.miss_should(
            f"no answer to {' or '.join(silent)}: the server ignored the line rather than hung. JSON-RPC 2.0"
            f" defines {code} for it, but MCP does not require an answer to a line that is not a valid"
            f" message on {ctx.transport}, and no official SDK sends one (--strict makes this a FAIL)"
        )


def _exited(ctx: CaseContext, probe: Probe, vector: dict[str, Any], raw: bytes) -> None:
    """A server that dies on one bad line broke no MCP MUST by not answering, but it is worth knowing.

    Only an unanswered probe comes here: a server that answered the line and exited afterwards did
    not die on it (the next case gets a restarted session and judges what follows).
    """
    ctx.facts.setdefault("exited", []).append({"probe": vector["id"], "diagnostics": probe.closed[-2000:]})
    sentinel = probe.sentinel.request if probe.sentinel and probe.sentinel.request else {}
    ctx.miss_should(
        f"{vector['id']}: the server exited after {_shown(raw)}, answering neither it nor the"
        f" {sentinel.get('method', 'request')} sent after it ({probe.closed.splitlines()[0]}; the session"
        " was restarted; --strict makes this a FAIL)"
    )


def _note_exit(ctx: CaseContext, probe: Probe, vector: dict[str, Any]) -> None:
    if probe.closed:
        ctx.note(f"{vector['id']}: answered, then the stream ended ({probe.closed.splitlines()[0]})")


def _probes(requirement: str) -> list[dict[str, Any]]:
    return [v for v in load_vectors("base", "envelope-probes.json") if v["requirement"] == requirement]


async def _run_probe(ctx: CaseContext, vector: dict[str, Any], check_id: str) -> tuple[Probe, bytes] | None:
    """Send one vector's line, settled by the sentinel; None when it was not sent or went unanswered
    with the sentinel too (`Deaf`, judged by `_judge_deaf`).

    On stdio and HTTP+SSE, silence after the line is what the row observes, not a failure to observe:
    a server gone deaf is judged as one that exited on the line (WARN, the session restarted), and
    no further malformed line is sent in the revision (`DEAF`). Over Streamable HTTP no such silence
    is raised here: a POST without an answer is the transport's MUST (`_unanswered`)."""
    if DEAF in ctx.shared:
        ctx.facts.setdefault("not_sent", []).append(vector["id"])
        return None
    session = await ctx.session()
    msg_id = session.next_id()
    raw = vector["send"].replace("{id}", str(msg_id)).encode("utf-8")
    try:
        probe = await _send_malformed(ctx, raw, expect_id=None if vector["expect_null_id"] else msg_id)
    except ProbeUnanswered as exc:
        ctx.shared[DEAF] = Deaf(check_id, vector["id"], _shown(raw), str(exc))
        if exc.probe.sentinel is not None:
            ctx.calls.append(exc.probe.sentinel)
        ctx.calls.append(exc.probe.call)
        ctx.facts["deaf"] = {
            "probe": vector["id"],
            "waited_s": round(exc.waited, 1),
            **({"diagnostics": exc.evidence[-2000:]} if exc.evidence else {}),
        }
        return None
    return probe, raw


def _judge_deaf(ctx: CaseContext, check_id: str) -> None:
    """The server went deaf after a malformed line (`Deaf`): WARN on the case that saw it, as an exit
    on the line is (--strict: FAIL), naming the probes left unsent; a later case that sent nothing for
    it is SKIP blocked by that case."""
    deaf: Deaf | None = ctx.shared.get(DEAF)
    if deaf is None:
        return
    not_sent = ctx.facts.get("not_sent", [])
    if deaf.check_id != check_id:
        blocked(
            deaf.check_id,
            f"not sent ({', '.join(not_sent)}): the server went deaf after {deaf.shown} ({deaf.vector}:"
            f" {deaf.why}, and it did not exit); another line that is not a valid message would only"
            " cost the same wait again",
        )
    left = f"; not sent, so as not to wait again: {', '.join(not_sent)}" if not_sent else ""
    ctx.miss_should(
        f"{deaf.vector}: the server went deaf after {deaf.shown}: {deaf.why}, and it did not exit."
        f" MCP requires no answer to a line that is not a valid message on {ctx.transport}, but a server"
        f" that stops answering after one is worth knowing (the session was restarted{left};"
        " --strict makes this a FAIL)"
    )


@check("base.rpc.parse-error", "BASE-RPC-005", "malformed JSON is answered with -32700")
async def parse_error(ctx: CaseContext) -> None:
    silent: list[str] = []
    for vector in _probes("BASE-RPC-005"):
        sent = await _run_probe(ctx, vector, "base.rpc.parse-error")
        if sent is None:
            continue
        probe, raw = sent
        call = probe.call
        if _refused_by_http_status(ctx, call, vector):
            continue
        if not probe.answered:
            _unanswered(ctx, probe, vector, raw, silent)
            continue
        if call.error is None:
            missed(f"{vector['id']}: a line that is not JSON was answered with a result", **call.excerpt())
        if call.error_code != jsonrpc.PARSE_ERROR:
            # Refused, with another code: -32700 is what JSON-RPC 2.0 defines, in no MUST sentence.
            ctx.miss_should(f"{vector['id']}: refused, but with {call.drew()} rather than -32700")
        value = call.response
        if isinstance(value, dict) and value.get("id") is not None:
            missed(
                f"{vector['id']}: a parse error response must have id null, got {value.get('id')!r}",
                **call.excerpt(),
            )
        _note_exit(ctx, probe, vector)
    _judge_deaf(ctx, "base.rpc.parse-error")
    _judge_silent(ctx, silent, jsonrpc.PARSE_ERROR)


@check("base.rpc.invalid-request", "BASE-RPC-006", "an invalid request is answered with -32600")
async def invalid_request(ctx: CaseContext) -> None:
    silent: list[str] = []
    for vector in _probes("BASE-RPC-006"):
        sent = await _run_probe(ctx, vector, "base.rpc.invalid-request")
        if sent is None:
            continue
        probe, raw = sent
        call = probe.call
        if call.result is not None:
            missed(f"{vector['id']}: an invalid request was answered with a result", **call.excerpt())
        if _refused_by_http_status(ctx, call, vector):
            continue
        if not probe.answered:
            _unanswered(ctx, probe, vector, raw, silent)
            continue
        _note_exit(ctx, probe, vector)
        if call.error_code == jsonrpc.HEADER_MISMATCH and ctx.era == "modern" and ctx.transport == "http":
            ctx.note(f"{vector['id']}: refused as a header mismatch (no Mcp-Method header can mirror it)")
            continue
        if call.error_code != jsonrpc.INVALID_REQUEST:
            ctx.miss_should(
                f"{vector['id']}: refused, but with {call.drew()} rather than -32600"
                " (--strict makes this a FAIL)"
            )
    _judge_deaf(ctx, "base.rpc.invalid-request")
    _judge_silent(ctx, silent, jsonrpc.INVALID_REQUEST)


@check("base.rpc.method-not-found", "BASE-RPC-007", "an unknown method is answered with -32601")
async def method_not_found(ctx: CaseContext) -> None:
    call = await ctx.request("conformance/no-such-method")
    if call.error_code != jsonrpc.METHOD_NOT_FOUND:
        # JSON-RPC 2.0's code table names -32601, in no MUST sentence: the row is a SHOULD (2026-07-28's
        # MUST over Streamable HTTP, 404 with -32601, is BASE-HTTP-013's).
        missed(f"an unknown method was answered with {call.drew()}, not -32601", **call.excerpt())
