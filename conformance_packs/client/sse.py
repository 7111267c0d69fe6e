"""A Streamable HTTP event stream closed before its answer: the client resumes it with GET, after the
retry field's time, naming the last event it saw (SEP-1699)."""

from __future__ import annotations

from functools import partial

from conformance.pack_api import Arrival, ClientContext, client_check, missed, skip
from conformance_packs.client.common import shown

SCENARIO = "sse-retry"
#: The scenario's retry field (ms), the scheduler tolerance early, and the factor past which it is late.
RETRY_MS = 500
EARLY_MS = 50
LATE_FACTOR = 2
_check = partial(client_check, scenario=SCENARIO, revisions=("2025-11-25",), transports=("http",))


def _gets_after_close(ctx: ClientContext) -> tuple[list[Arrival], float]:
    """The GETs after the scenario closed the tool's stream, and when it closed it; SKIP (blocked when
    the client failed the contract) when it never did. None of them is the client's failure to
    resume: SKIP blocked by the contract case when the client failed it."""
    closed = ctx.recording.marks.get("stream-closed")
    if closed is None:
        ctx.needs("tools/call", "call test_reconnection")
        ctx.absent("the scenario never closed the tool's stream")
    after = [a for a in ctx.recording.arrivals if a.method == "GET" and a.t >= closed]
    if not after:
        ctx.unless_failed("the client sent no GET after the stream closed")
    return after, closed


def _reconnect(ctx: ClientContext) -> tuple[Arrival, float]:
    """The first GET after the scenario closed the stream, and the milliseconds it came after."""
    after, closed = _gets_after_close(ctx)
    if not after:
        skip("the client did not reconnect (CLIENT-SSE-001 judges it)")
    return after[0], (after[0].t - closed) * 1000


@_check(
    "client.sse.reconnect",
    "CLIENT-SSE-001",
    "a stream closed before its answer is resumed with a GET",
)
async def reconnects(ctx: ClientContext) -> None:
    if not _gets_after_close(ctx)[0]:
        missed("the client did not reconnect with a GET after the stream closed without its answer")


@_check(
    "client.sse.retry-wait",
    "CLIENT-SSE-002",
    "the client waits the retry field's time before it reconnects",
)
async def retry_wait(ctx: ClientContext) -> None:
    _, waited = _reconnect(ctx)
    if waited < RETRY_MS - EARLY_MS:
        missed(
            f"the client reconnected {waited:.0f} ms after the stream closed; the retry field said {RETRY_MS}"
        )
    if waited > RETRY_MS * LATE_FACTOR:
        ctx.miss_should(
            f"the client reconnected only after {waited:.0f} ms (retry: {RETRY_MS} ms): it seems to ignore it"
        )
    ctx.note(f"reconnected after {waited:.0f} ms (retry: {RETRY_MS} ms)")


@_check(
    "client.sse.last-event-id",
    "CLIENT-SSE-003",
    "the reconnecting GET carries Last-Event-ID",
)
async def last_event_id(ctx: ClientContext) -> None:
    get, _ = _reconnect(ctx)
    said = get.headers.get("last-event-id")
    if said != "event-1":
        missed(
            f"the reconnecting GET carried Last-Event-ID: {shown(said)}, not the closed stream's event-1",
            headers=dict(get.headers),
        )
