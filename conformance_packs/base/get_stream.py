"""The legacy Streamable HTTP GET stream and resumption (2025-03-26 to 2025-11-25): what the stream a GET
opens may carry, the SSE event IDs a server attaches, and a `Last-Event-ID` replay.

Each check works on a session of its own: a server may allow one GET stream per session, and event IDs
are unique per session only, so IDs seen in two sessions are never compared. Whether a GET opens a
stream at all is BASE-HTTP-002's; these checks SKIP when it does not (405), and when the server attaches
no event IDs (resumability is optional), never PASS. A GET that draws no answer at all is met once (by
BASE-HTTP-002 when it runs): the others are SKIP, blocked by that case, and send no GET of their own.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from conformance.pack_api import (
    Call,
    CaseContext,
    Frame,
    Session,
    check,
    missed,
    probe_grace,
    skip,
    unjudgeable,
)
from conformance_packs.base.http import LEGACY_GET, LEGACY_GET_WHAT

#: The revisions with a GET stream and resumable SSE streams.
STREAM_REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
#: Seconds at most a replay may take to bring the resumed stream's answer back.
REPLAY_WAIT = 2.0
ANSWERS = ("response", "error")


async def _http(ctx: CaseContext, session: Session) -> Any:
    adapter = await ctx.http_adapter(session)
    if adapter is None:
        unjudgeable("this check needs the Streamable HTTP adapter")
    return adapter


def _no_stream(stream: Any) -> None:
    """SKIP unless the GET opened an event stream."""
    if stream.status == 405:
        skip("GET answered 405: the server offers no GET stream (allowed), nothing to judge")
    if stream.status != 200 or not stream.content_type.startswith("text/event-stream"):
        skip(
            f"GET answered HTTP {stream.status} ({stream.content_type or 'no content type'}), not an event "
            "stream: BASE-HTTP-002 judges that answer"
        )


def _shown(frames: list[Frame]) -> list[str]:
    return [frame.text[:200] for frame in frames[:5]]


async def _probe(ctx: CaseContext, session: Session, method: str) -> Call:
    call = await session.request(method)
    ctx.calls.append(call)
    if call.result is None:
        unjudgeable(f"{method} drew no result in the case's own session", **call.excerpt())
    return call


@dataclass(frozen=True)
class HeldStream:
    """A GET stream held open in a session of its own while requests were POSTed and answered there."""

    status: int
    content_type: str
    frames: list[Frame]
    requests: int


def _get_guard(ctx: CaseContext) -> AbstractAsyncContextManager[None]:
    """Around a GET's opening: SKIP blocked by the case whose GET drew no answer (BASE-HTTP-002's, when
    it ran), sending nothing; a GET that draws none here is remembered so for the other rows."""
    return ctx.guard(LEGACY_GET, LEGACY_GET_WHAT, across_revisions=True)


@contextlib.asynccontextmanager
async def _listening(
    ctx: CaseContext, adapter: Any, headers: dict[str, str] | None = None
) -> AsyncIterator[Any]:
    """A GET stream held open for the block; its opening guarded (`_get_guard`), not what the block
    does with it (a request the block POSTs that fails is no failure of the GET)."""
    async with contextlib.AsyncExitStack() as stack:
        async with _get_guard(ctx):
            stream = await stack.enter_async_context(
                adapter.listen(timeout=ctx.options.timeout, headers=headers)
            )
        yield stream


async def _held_stream(ctx: CaseContext) -> HeldStream:
    async with _get_guard(ctx):
        pass  # a GET that already drew no answer: no session of its own to open
    session = await ctx.fresh_session()
    adapter = await _http(ctx, session)
    async with _listening(ctx, adapter) as stream:
        if stream.status != 200 or not stream.content_type.startswith("text/event-stream"):
            return HeldStream(stream.status, stream.content_type, [], 0)
        calls = [await _probe(ctx, session, "ping") for _ in range(2)]
        if ctx.identity.has("tools"):
            calls.append(await _probe(ctx, session, "tools/list"))
        # What the stream still has on its way: a grace scaled to the probes' round trips.
        await stream.wait_for(lambda events: False, probe_grace(max(c.reply.elapsed for c in calls)))
        return HeldStream(stream.status, stream.content_type, stream.frames, len(calls))


async def _get_stream(ctx: CaseContext) -> HeldStream:
    """The held GET stream of this (target, revision), observed once for BASE-HTTP-019 and -022."""
    held = await ctx.remember_once(
        "base:held-get-stream", "a GET stream held open in a session of its own", lambda: _held_stream(ctx)
    )
    _no_stream(held)
    return held


@check(
    "base.http.get-stream-no-response",
    "BASE-HTTP-019",
    "the GET stream carries no JSON-RPC response",
    eras=("legacy",),
    transports=("http",),
    revisions=STREAM_REVISIONS,
    fresh_sessions=1,
)
async def get_stream_no_response(ctx: CaseContext) -> None:
    """Hold a GET stream open while requests are POSTed in the same session: their responses belong on
    their POSTs' answers, and nothing the GET stream carries may be a response (it resumes nothing)."""
    held = await _get_stream(ctx)
    answers = [frame for frame in held.frames if frame.kind in ANSWERS]
    if answers:
        missed(
            f"the GET stream (opened without Last-Event-ID, so resuming nothing) carried {len(answers)} "
            f"JSON-RPC response(s), id(s) {[frame.id for frame in answers][:5]}",
            get_stream=_shown(answers),
        )
    ctx.note(
        f"{held.requests} requests answered on their own POSTs while the GET stream was open; the stream "
        f"carried {len(held.frames)} message(s), none a response"
    )


@check(
    "base.http.get-stream-messages",
    "BASE-HTTP-022",
    "every event the GET stream carries is a JSON-RPC message",
    eras=("legacy",),
    transports=("http",),
    revisions=STREAM_REVISIONS,
    fresh_sessions=1,
)
async def get_stream_messages(ctx: CaseContext) -> None:
    """The data of each event of the held GET stream (an event with empty data, such as a priming
    event, carries none): a JSON-RPC request, notification or response, parsed as JSON."""
    held = await _get_stream(ctx)
    if not held.frames:
        skip("the GET stream carried no event with data while it was held open: nothing to judge")
    bad = [frame for frame in held.frames if frame.kind not in ("request", "notification", *ANSWERS)]
    if bad:
        missed(
            f"{len(bad)} of the {len(held.frames)} events of the GET stream carried no JSON-RPC message: "
            + "; ".join(f"{frame.problem or frame.kind}: {frame.text[:80]!r}" for frame in bad[:3]),
            get_stream=_shown(bad),
        )
    ctx.note(f"{len(held.frames)} events of the GET stream, each a JSON-RPC message")


def _ids_of(call: Call | None) -> list[str]:
    return [event_id for event_id, _ in call.reply.event_ids] if call is not None else []


@check(
    "base.http.event-ids-unique",
    "BASE-HTTP-020",
    "SSE event IDs are unique across a session's streams",
    eras=("legacy",),
    transports=("http",),
    revisions=STREAM_REVISIONS,
    fresh_sessions=1,
)
async def event_ids_unique(ctx: CaseContext) -> None:
    """Every event ID of one session's streams: the initialize answer, three POSTed requests' answers
    and a GET stream held open meanwhile. IDs are compared within this one session only."""
    async with _get_guard(ctx):
        pass  # a GET that already drew no answer: no session of its own to open
    session = await ctx.fresh_session()
    adapter = await _http(ctx, session)
    streams: list[tuple[str, list[str]]] = []
    opening = session.identity.opening
    if opening is not None:
        streams.append(("initialize", _ids_of(opening)))
    async with _listening(ctx, adapter) as stream:
        for method in ("ping", "ping", "tools/list" if ctx.identity.has("tools") else "ping"):
            call = await _probe(ctx, session, method)
            streams.append(
                (f"{method} (id {call.reply.response.id if call.reply.response else '?'})", _ids_of(call))
            )
        get_ids = (
            [event.id for event in stream.events if event.id is not None] if stream.status == 200 else []
        )
        if get_ids:
            streams.append(("the GET stream", get_ids))
    seen = Counter(event_id for _, ids in streams for event_id in ids)
    if not seen:
        skip("the server attached no SSE event ID to any event of the session (IDs are optional)")
    repeated = {event_id: n for event_id, n in seen.items() if n > 1}
    if repeated:
        where = {
            event_id: [name for name, ids in streams for i in ids if i == event_id]
            for event_id in list(repeated)[:5]
        }
        missed(
            f"{len(repeated)} SSE event ID(s) used more than once within one session: "
            + "; ".join(f"{event_id!r} on {', '.join(names)}" for event_id, names in where.items()),
            event_ids={name: ids[:20] for name, ids in streams},
        )
    ctx.note(
        f"{sum(seen.values())} event IDs over {sum(1 for _, ids in streams if ids)} streams, all distinct"
    )


@check(
    "base.http.resume-own-stream",
    "BASE-HTTP-021",
    "a Last-Event-ID resumption replays only the stream that was cut",
    eras=("legacy",),
    transports=("http",),
    revisions=STREAM_REVISIONS,
    fresh_sessions=1,
)
async def resume_own_stream(ctx: CaseContext) -> None:
    """Two pings in one session; then a GET with `Last-Event-ID` naming an event of the first ping's
    stream from before its answer. A replay may bring the first ping's answer back; an answer of the
    other ping (another stream) must never come."""
    async with _get_guard(ctx):
        pass  # a GET that already drew no answer: no session of its own to open
    session = await ctx.fresh_session()
    adapter = await _http(ctx, session)
    first = await _probe(ctx, session, "ping")
    answer = first.reply.response
    cursor = None
    for event_id, frame in first.reply.event_ids:
        if answer is not None and frame is answer:
            break
        cursor = event_id
    if cursor is None:
        skip(
            "the server sent no SSE event with an ID before ping's answer: no stream to resume part-way "
            "(resumability is optional)"
        )
    second = await _probe(ctx, session, "ping")
    own_id = first.reply.response.id if first.reply.response else None
    async with _listening(ctx, adapter, {"Last-Event-ID": cursor}) as stream:
        if stream.status != 200 or not stream.content_type.startswith("text/event-stream"):
            skip(
                f"the GET with Last-Event-ID {cursor!r} answered HTTP {stream.status} "
                f"({stream.content_type or 'no content type'}): the server does not resume (allowed)"
            )

        def settled(events: list[Any]) -> bool:
            return any(e.frame is not None and e.frame.kind in ANSWERS for e in events)

        await stream.wait_for(settled, min(ctx.options.timeout, REPLAY_WAIT))
        frames = stream.frames
    evidence = {"last_event_id": cursor, "replayed": _shown(frames), "first_ping_id": own_id}
    foreign = [frame for frame in frames if frame.kind in ANSWERS and frame.id != own_id]
    if foreign:
        other = second.reply.response.id if second.reply.response else None
        whose = (
            " (the second ping's answer, on another stream)" if any(f.id == other for f in foreign) else ""
        )
        missed(
            f"resuming after event {cursor!r} of the first ping's stream replayed {len(foreign)} answer(s) "
            f"of another stream: id(s) {[frame.id for frame in foreign][:5]}{whose}",
            **evidence,
        )
    if not any(frame.kind in ANSWERS for frame in frames):
        skip(f"resuming after event {cursor!r} replayed no answer within {REPLAY_WAIT:g} s: nothing to judge")
    ctx.note(
        f"resuming after event {cursor!r} replayed the first ping's own answer and nothing of another stream"
    )
