"""ping, notifications and the opening exchange: what a server answers, and what it must leave unanswered.

Why: a client measures a connection's health with ping (legacy revisions), and a server that answers a
notification sends a response to a request nobody made, which a client cannot place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.pack_api import (
    CaseContext,
    TransportClosed,
    TransportError,
    blocked,
    check,
    jsonrpc,
    missed,
    weak,
)
from conformance_packs.base.input_sweep import EARLY_PING_ID, declared_opening
from conformance_packs.base.input_sweep import early_answers as _early
from conformance_packs.base.wirelog import Seen, excerpt, server_messages


def _is_empty(result: Any) -> bool:
    """An empty result, as the schema's EmptyResult is: an object with nothing but `_meta`."""
    return isinstance(result, dict) and all(key == "_meta" for key in result)


def _empty(response: Any, what: str, evidence: Mapping[str, Any]) -> None:
    """The answer to a ping must be an empty result (the schema's EmptyResult: nothing but `_meta`)."""
    result = response.get("result") if isinstance(response, dict) else None
    if not isinstance(result, dict):
        error = response.get("error") if isinstance(response, dict) else None
        got = f"error {json.dumps(error.get('code'))}" if isinstance(error, dict) else "no result"
        missed(f"{what} was answered with {got}, not an empty result", **evidence)
    extra = sorted(k for k in result if k != "_meta")
    if extra:
        missed(f"{what} was answered with a result that is not empty: it has {', '.join(extra)}", **evidence)


@check(
    "base.ping.empty-result",
    "BASE-PING-001",
    "ping is answered promptly with an empty result",
    eras=("legacy",),
)
async def ping_empty_result(ctx: CaseContext) -> None:
    with ctx.answer_judged("ping was not answered"):  # "MUST respond promptly": no answer is the finding
        call = await ctx.request("ping")
    _empty(call.response, "ping", call.excerpt())
    ctx.note(f"answered in {call.reply.elapsed * 1000:.0f} ms")


#: Notifications a server must not answer: one no revision defines, a cancellation of a request that
#: was never sent and one that names no request (the server may ignore them; it must not answer them,
#: even with an error: JSON-RPC 2.0 §4.1). The two cancellations are BASE-CANCEL-001's, which leaves an
#: answer to either to this row.
NOTIFICATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("notifications/conformance/unknown_7f3a", {}),
    ("notifications/cancelled", {"requestId": "conformance-never-sent-7f3a", "reason": "conformance probe"}),
    ("notifications/cancelled", {"reason": "conformance probe"}),
)


def _what(method: str, params: dict[str, Any]) -> str:
    """A notification as a message names it (the two cancellations apart)."""
    if method != "notifications/cancelled":
        return method
    return f"{method} ({'a request id never sent' if 'requestId' in params else 'no requestId'})"


def replies_to_notifications(entries: list[dict[str, Any]], sentinel: Any) -> list[Seen]:
    """The replies (results or errors, with an id, without one or with id null) the server sent in
    `entries` other than the sentinel request's answer: after a notification, each is a response to it.

    Over HTTP a reply in the body of an HTTP error status to the notification's POST is the transport's
    refusal, which every Streamable HTTP revision allows ("If the server cannot accept the input, it
    MUST return an HTTP error status code ... The HTTP response body MAY comprise a JSON-RPC error
    response that has no id"), not an answer.
    """
    return [
        s
        for s in server_messages(entries)
        if s.kind == "response"
        and (sentinel is None or s.message.get("id") != sentinel)
        and not _refusal(entries, s)
    ]


def _refusal(entries: list[dict[str, Any]], seen: Seen) -> bool:
    return entries[seen.entry].get("channel") == "body" and (seen.status or 0) >= 400


@check("base.notif.no-response", "BASE-NOTIF-001", "notifications get no response")
async def no_response(ctx: CaseContext) -> None:
    session = await ctx.session()
    for method, params in NOTIFICATIONS:
        params = dict(params)
        if ctx.era == "modern":
            params["_meta"] = session.meta()
        raw = jsonrpc.encode(jsonrpc.notification(method, params))
        mark = ctx.mark()
        try:
            probe = await session.probe(raw, expect_id=None, headers=session.headers_for(method, params))
        except TransportError:
            ctx.session_broken()
            raise
        if probe.closed:
            ctx.session_broken()
            missed(f"the stream ended after the notification {method} ({probe.closed.splitlines()[0]})")
        sentinel = probe.sentinel.request.get("id") if probe.sentinel and probe.sentinel.request else None
        entries = ctx.wire_since(mark)
        answers = replies_to_notifications(entries, sentinel)
        if answers:
            reply = answers[0].message
            how = " without an id" if "id" not in reply else (" with id null" if reply["id"] is None else "")
            kind = "an error" if "error" in reply else "a result"
            missed(
                f"the notification {_what(method, params)} was answered with {kind}{how}: "
                + json.dumps(reply, ensure_ascii=False)[:300],
                **excerpt(entries, answers[0]),
            )
        if probe.sentinel is not None:
            ctx.calls.append(probe.sentinel)
    ctx.note(
        "no response to "
        + ", ".join(_what(m, p) for m, p in NOTIFICATIONS)
        + "; the request after each was answered"
    )


@check(
    "base.lifecycle.ping-during-initialize",
    "BASE-LIFE-010",
    "a ping sent during initialize is answered",
    eras=("legacy",),
    transports=("stdio",),
    fresh_sessions=1,
)
async def ping_during_initialize(ctx: CaseContext) -> None:
    # The process of its own is the input sweep's too (`declared_opening`): one start, not two.
    opening = await declared_opening(ctx)
    if opening.case != ctx.case_key:
        ctx.note(f"the opening exchange of {opening.case}, which the input sweep's client opened first")
    entries, ended, settle = opening.entries, opening.ended, opening.settle
    settled = opening.answer(settle.request["id"]) if settle is not None and settle.request else None
    if settle is not None:
        ctx.calls.append(settle)
    if settled is not None and not _is_empty(settled.get("result")):
        # The ping after the handshake (its own answer, by id) is no empty result either: the server's
        # ping is broken whenever it is sent, BASE-PING-001's defect, which says nothing of a ping sent
        # during initialization.
        blocked(
            "base.ping.empty-result",
            "the ping after the handshake was not answered with an empty result either: the server's ping"
            " is BASE-PING-001's to judge",
        )
    answer = opening.answer(EARLY_PING_ID)
    if answer is None:
        if ended is not None:
            early = opening.early.excerpt() if opening.early is not None else {}
            _never_answered(entries, opening.init_id, ended, early)
        weak(
            "the ping written right after initialize was never answered, though the ping after the"
            " handshake was: a server that answered initialize before the ping reached it may have taken"
            " it as sent after initialization, so this is weak evidence",
            **(settle.excerpt() if settle is not None else {}),
        )
    ctx.attach(entries)
    seen = _early(entries, EARLY_PING_ID)
    evidence = excerpt(entries, seen[0]) if seen else {"response": json.dumps(answer)[:1500]}
    _empty(answer, "the ping written right after initialize", evidence)


def _never_answered(
    entries: list[dict[str, Any]], init_id: int, ended: TransportError, early: Mapping[str, Any]
) -> None:
    """The early ping was never answered and the server ended its stream or stopped answering: "The
    receiver MUST respond promptly", broken whatever it took the ping for. The exit status and stderr
    tail (or the wait) are the evidence."""
    initialized = any(
        s.kind == "response" and s.message.get("id") == init_id for s in server_messages(entries)
    )
    if isinstance(ended, TransportClosed):
        reason = str(ended).rsplit(": ", 1)[-1]  # "stdout closed (exit status N)"
        then = "answered initialize, then ended its stream" if initialized else "ended its stream"
        what = f"the server {then} ({reason})"
    else:
        what = f"the server stopped answering ({ended})"
    evidence: dict[str, Any] = {**early, "observed": str(ended)}  # the early ping, "(no response)"
    if ended.evidence:
        evidence["diagnostics"] = ended.evidence
    missed(f"the ping written right after initialize was never answered: {what}", **evidence)
