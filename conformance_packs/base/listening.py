"""subscriptions/listen held open while something is done, then cancelled: the one listen mechanism of
the packs of this repository (the base pack's resource subscriptions, the official-fixture pack's list
changes). No check lives here, so another pack may import it without registering the base pack's checks.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import CaseContext, TransportTimeout, jsonrpc, probe_grace, unjudgeable
from conformance_packs.base.received import Received, raw_request, received_since, sentinel

_LISTEN_IDS = itertools.count(1)


@dataclass
class ListenFlow:
    listen_id: str
    uris: list[str]
    #: Every message the server sent from the listen request until the sentinel after the reads.
    messages: list[Received] = field(default_factory=list)
    closed: str = ""
    #: Over Streamable HTTP: why the listen request drew no stream to read (no answer in time, or an
    #: HTTP answer with no JSON-RPC message), as the acknowledgment row's FAIL says it.
    failure: str = ""

    def tagged(self) -> list[Received]:
        return [m for m in self.messages if m.subscription == self.listen_id]


async def listen_during(
    ctx: CaseContext,
    params: dict[str, Any],
    act: Callable[[], Awaitable[float]],
    settled: Callable[[list[Any]], bool],
) -> ListenFlow:
    """subscriptions/listen with `params` on the shared session, `act` done while it is open (it returns
    a round trip's seconds, which sizes the wait for what it causes), then the listen's cancellation:
    on stdio and the legacy SSE stream a notifications/cancelled and a sentinel; over Streamable HTTP its
    stream held until `settled(events)` or that wait, then closed. One mechanism for every listen a pack
    judges (the resources' updates here, a list change another pack's trigger causes)."""
    session = await ctx.session()
    flow = ListenFlow(f"conformance-listen-{next(_LISTEN_IDS)}", [])
    mark = ctx.mark()
    if ctx.transport == "http":
        await _listen_http(ctx, flow, params, act, settled)
        flow.messages = received_since(ctx, mark)
        return flow
    probe = await session.probe(
        raw_request(session, flow.listen_id, "subscriptions/listen", params), expect_id=flow.listen_id
    )
    flow.closed = probe.closed
    if not probe.closed:
        await act()
        await session.notify("notifications/cancelled", {"requestId": flow.listen_id})
        await sentinel(ctx)
    flow.messages = received_since(ctx, mark)
    return flow


async def _listen_http(
    ctx: CaseContext,
    flow: ListenFlow,
    params: dict[str, Any],
    act: Callable[[], Awaitable[float]],
    settled: Callable[[list[Any]], bool],
) -> None:
    """subscriptions/listen POSTed and its stream held open while `act` runs; what it causes is waited
    for (bounded: a few of its round trips), then the stream is closed, which 2026-07-28 makes the
    cancellation ("Closing the SSE response stream MUST be treated by the server as cancellation of that
    request")."""
    session = await ctx.session()
    adapter = await ctx.http_adapter()
    if adapter is None:
        unjudgeable("this flow needs the Streamable HTTP adapter")
    body = raw_request(session, flow.listen_id, "subscriptions/listen", params)
    headers = session.headers_for("subscriptions/listen", params)
    timeout = ctx.options.timeout
    try:
        async with adapter.listen(timeout=timeout, headers=headers, body=body) as listening:
            if not listening.content_type.startswith("text/event-stream"):
                # A JSON answer (a refusal, say) is in the wire log for the rows to read; anything else
                # carries no message at all.
                if jsonrpc.classify(listening.body).kind == "garbage":
                    kind = listening.content_type or "no content type"
                    flow.failure = f"HTTP {listening.status} ({kind}) answered it with no JSON-RPC message"
                return
            if not await listening.wait_for(lambda events: any(e.frame for e in events), timeout):
                flow.failure = f"the stream carried no message within {timeout:g} s"
                return
            round_trip = await act()
            await listening.wait_for(settled, probe_grace(round_trip))
    except TransportTimeout:
        flow.failure = f"no HTTP answer to subscriptions/listen within {timeout:g} s"
