"""The client's general obligations, judged on every scenario's recording (one recording, many rows):
request IDs, the Accept header of Streamable HTTP, nothing but MCP messages on the server's stdin,
initialize never cancelled, and roots/list_changed only when declared. A rule no scenario needs a script
for is read from whatever the client sent in each run, so a defect shows wherever the client shows it.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import EVERY_SCENARIO, ClientContext, client_check, missed, since
from conformance_packs.client import plus_scenarios  # noqa: F401  (registers the scenarios)
from conformance_packs.client.common import params_of
from conformance_packs.client.plus_common import LEGACY, capabilities_of, plus_shape, sessions

STREAMABLE = tuple(since("2025-03-26"))


def _sent_anything(ctx: ClientContext) -> None:
    if not ctx.recording.arrivals:
        ctx.absent("the client sent nothing")


@client_check(
    "client.hygiene.request-ids",
    "CLIENT-HYG-001",
    "every request's ID is a string or an integer, and none is used twice in a session",
    scenario=EVERY_SCENARIO,
)
async def request_ids(ctx: ClientContext) -> None:
    _sent_anything(ctx)
    for session in sessions(ctx.recording):
        seen: dict[Any, str] = {}
        for message in (m for m in session if m.is_request):
            msg_id = message.value["id"]
            if plus_shape("requestId", msg_id):
                missed(f"the client's {message.method} request has the ID {msg_id!r}", request=message.value)
            key = (type(msg_id).__name__, msg_id)
            if key in seen and ctx.revision in LEGACY:
                missed(
                    f"the client's {message.method} reuses the ID {msg_id!r} of its {seen[key]}",
                    request=message.value,
                )
            seen[key] = str(message.method)
    ctx.note("every request ID a string or an integer" + (", none reused" if ctx.revision in LEGACY else ""))


def _media_types(header: str | None) -> set[str]:
    return {part.split(";")[0].strip().lower() for part in (header or "").split(",") if part.strip()}


@client_check(
    "client.hygiene.accept",
    "CLIENT-HYG-002",
    "every POST's Accept lists application/json and text/event-stream; every GET's text/event-stream",
    scenario=EVERY_SCENARIO,
    revisions=STREAMABLE,
    transports=("http",),
)
async def accept_header(ctx: ClientContext) -> None:
    _sent_anything(ctx)
    wanted = {"POST": {"application/json", "text/event-stream"}, "GET": {"text/event-stream"}}
    posts = [a.path.split("?")[0] for a in ctx.recording.arrivals if a.method == "POST"]
    for arrival in ctx.recording.arrivals:
        if posts and arrival.path.split("?")[0] != posts[0]:
            continue  # not the MCP endpoint (a URL a tool's schema names, fetched): no MCP request
        needed = wanted.get(arrival.method)
        said = arrival.headers.get("accept")
        if needed and not needed <= _media_types(said):
            missed(
                f"a {arrival.method} carried Accept: {said!r}, not listing {', '.join(sorted(needed))}",
                headers=dict(arrival.headers),
            )


@client_check(
    "client.hygiene.stdio-messages",
    "CLIENT-HYG-003",
    "every line the client writes to the server's stdin is one JSON-RPC message",
    scenario=EVERY_SCENARIO,
    transports=("stdio",),
)
async def stdio_messages(ctx: ClientContext) -> None:
    _sent_anything(ctx)
    for arrival in ctx.recording.arrivals:
        frames = arrival.frames()
        for frame in frames:
            value = frame.value
            if frame.kind in ("garbage", "invalid") or value.get("jsonrpc") != "2.0":
                text = arrival.body[:200].decode("utf-8", "replace")
                missed(f"the client wrote a line that is no JSON-RPC 2.0 message: {text!r}")


@client_check(
    "client.hygiene.initialize-not-cancelled",
    "CLIENT-HYG-004",
    "the client never cancels initialize",
    scenario=EVERY_SCENARIO,
    revisions=LEGACY,
)
async def initialize_not_cancelled(ctx: ClientContext) -> None:
    ctx.needs("initialize", "open the session")
    for session in sessions(ctx.recording):
        opened = {m.value["id"] for m in session if m.method == "initialize" and m.is_request}
        for message in session:
            said = params_of(message.value).get("requestId")
            if message.method == "notifications/cancelled" and said in opened:
                missed(
                    f"the client cancelled its initialize request (ID {said!r})", notification=message.value
                )


@client_check(
    "client.hygiene.roots-changed-declared",
    "CLIENT-HYG-005",
    "notifications/roots/list_changed only after declaring roots.listChanged",
    scenario=EVERY_SCENARIO,
    revisions=LEGACY,
)
async def roots_changed_declared(ctx: ClientContext) -> None:
    ctx.needs("initialize", "open the session")
    sent = 0
    for session in sessions(ctx.recording):
        roots = capabilities_of(session).get("roots")
        declared = isinstance(roots, dict) and roots.get("listChanged") is True
        for message in session:
            if message.method == "notifications/roots/list_changed":
                sent += 1
                if not declared:
                    missed(
                        f"the client sent notifications/roots/list_changed having declared roots: {roots!r}",
                        notification=message.value,
                    )
    ctx.note(f"{sent} roots/list_changed notifications, each after roots.listChanged: true")


@client_check(
    "client.hygiene.stdio-shutdown",
    "CLIENT-HYG-006",
    "stdio: the client closes the server's stdin before it signals the server",
    scenario=EVERY_SCENARIO,
    revisions=LEGACY,
    transports=("stdio",),
)
async def stdio_shutdown(ctx: ClientContext) -> None:
    _sent_anything(ctx)
    marks = ctx.recording.marks
    if ctx.exit.timed_out:
        ctx.unless_failed("the harness stopped the client's process group, the server it started with it")
    if "signalled-before-stdin-closed" in marks:
        missed("the client sent the server SIGTERM before closing its stdin")
    if "stdin-closed" not in marks:
        ctx.absent("the server's stdin was still open when the client's run ended")
    ctx.note("the client closed the server's stdin first")
