"""The client in a session's life, each in a scenario of the harness's own: it answers the server's ping,
waits for the initialize result before anything but pings, starts a new session after HTTP 404, and
cancels a request and asks for progress with well-formed parameters."""

from __future__ import annotations

from conformance.pack_api import Arrival, ClientContext, Message, client_check, missed, weak
from conformance_packs.client import plus_scenarios
from conformance_packs.client.common import negotiated, params_of
from conformance_packs.client.plus_common import LEGACY, plus_shape, sessions


@client_check(
    "client.sessions.ping",
    "CLIENT-PING-001",
    "the client answers the server's ping with an empty result",
    scenario="x-ping",
    revisions=LEGACY,
)
async def answers_ping(ctx: ClientContext) -> None:
    ctx.needs("tools/call", "call ping_me")
    answer = ctx.recording.facts.get("ping")
    if answer is None:
        ctx.unless_failed("the tool call never reached its ping")
        missed("the client never answered the server's ping")
    result = answer.get("result")
    if "error" in answer or not isinstance(result, dict):
        missed("the client answered the server's ping with no result", response=answer)
    if set(result) - {"_meta"}:
        missed(f"the client's answer to ping is not empty: {sorted(result)}", response=answer)


def _before_result(ctx: ClientContext) -> list[Message]:
    """What the client sent before the scenario gave the initialize result (initialize excepted)."""
    answered = ctx.recording.marks.get("initialize-answered")
    if answered is None:
        ctx.needs("initialize", "open the session")
        ctx.absent("the scenario never answered initialize")
    return [m for m in ctx.recording.messages() if m.arrival.t < answered and m.method != "initialize"]


@client_check(
    "client.sessions.nothing-before-result",
    "CLIENT-INIT-001",
    "no request other than ping before the initialize result",
    scenario="x-init-order",
    revisions=LEGACY,
)
async def nothing_before_result(ctx: ClientContext) -> None:
    early = [m for m in _before_result(ctx) if m.is_request and m.method != "ping"]
    if early:
        missed(
            f"the client sent {early[0].method} before the server answered initialize "
            f"({plus_scenarios.INITIALIZE_DELAY:.1f} s after it)",
            request=early[0].value,
        )


@client_check(
    "client.sessions.initialized-after-result",
    "CLIENT-INIT-002",
    "notifications/initialized only after the initialize result",
    scenario="x-init-order",
    revisions=LEGACY,
)
async def initialized_after_result(ctx: ClientContext) -> None:
    early = [m for m in _before_result(ctx) if m.method == "notifications/initialized"]
    if early:
        missed(
            "the client sent notifications/initialized before the initialize result",
            notification=early[0].value,
        )


@client_check(
    "client.sessions.new-session-on-404",
    "CLIENT-SESS-001",
    "after HTTP 404 on a request of the session the client initializes anew, without the session ID",
    scenario="x-session-expired",
    revisions=plus_scenarios.SESSIONS,
    transports=("http",),
)
async def new_session_on_404(ctx: ClientContext) -> None:
    ended = ctx.recording.marks.get("session-ended")
    if ended is None:
        ctx.needs("tools/list", "list the tools")
        ctx.absent("the scenario never ended the session")
    again = [m for m in ctx.requests("initialize") if m.arrival.t >= ended]
    if not again:
        ctx.unless_failed("the client sent no initialize after HTTP 404")
        missed("the client did not start a new session (no initialize) after HTTP 404")
    said = again[0].arrival.headers.get("mcp-session-id")
    if said is not None:
        missed(
            f"the new initialize carried the ended session's ID ({said!r})",
            headers=dict(again[0].arrival.headers),
        )


@client_check(
    "client.sessions.cancellation",
    "CLIENT-CANCEL-001",
    "notifications/cancelled names a request the client issued in the session",
    scenario="x-cancel",
    revisions=LEGACY,
)
async def cancellation(ctx: ClientContext) -> None:
    ctx.needs("notifications/cancelled", "cancel slow_task")
    for session in sessions(ctx.recording):
        issued: set[object] = set()
        for message in session:
            if message.is_request:
                issued.add(message.value["id"])
            if message.method != "notifications/cancelled":
                continue
            params = params_of(message.value)
            problems = plus_shape("cancelledParams", message.value.get("params"))
            if problems:
                missed("notifications/cancelled params: " + "; ".join(problems), notification=message.value)
            if params["requestId"] not in issued:
                missed(
                    f"notifications/cancelled names {params['requestId']!r}, no request the client issued",
                    notification=message.value,
                )


@client_check(
    "client.sessions.progress-token",
    "CLIENT-PROG-001",
    "every progress token the client asks for is a string or an integer",
    scenario="x-cancel",
    revisions=LEGACY,
)
async def progress_token(ctx: ClientContext) -> None:
    asked = []
    for message in ctx.recording.messages():
        meta = params_of(message.value).get("_meta") if message.is_request else None
        if isinstance(meta, dict) and "progressToken" in meta:
            asked.append(message)
            if plus_shape("progressToken", meta["progressToken"]):
                missed(
                    f"the client's {message.method} asks for progress with the token "
                    f"{meta['progressToken']!r}",
                    request=message.value,
                )
    if not asked:
        ctx.unless_failed("the client asked for no progress")
        weak("the client asked for no progress, though the scenario asks it to call slow_task with a token")
    ctx.note(f"{len(asked)} progress tokens, each a string or an integer")


def _gets(ctx: ClientContext) -> list[Arrival]:
    """The client's GET requests; none is SKIP (a client MAY open a GET stream, not must)."""
    found = [a for a in ctx.recording.arrivals if a.method == "GET"]
    if not found:
        ctx.absent("the client opened no GET stream (MCP says it MAY)")
    return found


@client_check(
    "client.sessions.get-resumed",
    "CLIENT-GET-001",
    "a broken GET stream is resumed with Last-Event-ID",
    scenario="x-get-resume",
    revisions=plus_scenarios.SESSIONS,
    transports=("http",),
)
async def get_resumed(ctx: ClientContext) -> None:
    _gets(ctx)
    broken = ctx.recording.marks.get("get-broken")
    if broken is None:
        ctx.absent("the scenario never broke a GET stream")
    after = [a for a in ctx.recording.arrivals if a.method == "GET" and a.t >= broken]
    if not after:
        ctx.unless_failed("the client sent no GET after its stream broke")
        missed("the client did not resume its broken GET stream")
    said = after[0].headers.get("last-event-id")
    if said != "get-1":
        missed(f"the resuming GET carried Last-Event-ID: {said!r}, not get-1", headers=dict(after[0].headers))


def _get_header(ctx: ClientContext, name: str, wanted: object) -> None:
    for arrival in _gets(ctx):
        said = arrival.headers.get(name.lower())
        if said != wanted:
            missed(f"a GET carried {name}: {said!r}, not {wanted!r}", headers=dict(arrival.headers))


@client_check(
    "client.sessions.get-session-id",
    "CLIENT-GET-002",
    "every GET of the session carries the Mcp-Session-Id the server gave",
    scenario="x-get-resume",
    revisions=plus_scenarios.SESSIONS,
    transports=("http",),
)
async def get_session_id(ctx: ClientContext) -> None:
    _get_header(ctx, "Mcp-Session-Id", ctx.recording.facts.get("session_id"))


@client_check(
    "client.sessions.get-protocol-version",
    "CLIENT-GET-003",
    "every GET of the session carries MCP-Protocol-Version with the negotiated version",
    scenario="x-get-resume",
    revisions=("2025-06-18", "2025-11-25"),
    transports=("http",),
)
async def get_protocol_version(ctx: ClientContext) -> None:
    opened = ctx.needs("initialize", "open the session")
    _get_header(ctx, "MCP-Protocol-Version", negotiated(ctx, opened))
