"""stdio: hygiene, judged last over everything the server wrote to stdout during the revision's cases, and
shutdown (the server exits once its stdin is closed)."""

from __future__ import annotations

import base64

from conformance.pack_api import (
    BATCH_REVISIONS,
    CaseContext,
    TransportError,
    bytes_text,
    check,
    classify,
    missed,
    skip,
    unjudgeable,
)
from conformance_packs.base.wirelog import drawn_by


@check(
    "base.stdio.stdout-only-messages",
    "BASE-STDIO-001",
    "nothing but MCP messages on stdout",
    transports=("stdio",),
)
async def stdout_only_messages(ctx: CaseContext) -> None:
    """Every line the server wrote on stdout in the revision. A line past the harness's caps (its size,
    its depth) was not read, so it is no evidence either way: counted, not judged (the case that awaited
    it is the one that could not judge its answer)."""
    try:
        await ctx.request("tools/list" if ctx.identity.has("tools") else "ping")
    except TransportError as exc:
        if exc.sent:
            raise
        ctx.note(f"no request of its own ({exc})")  # the log the other cases left is still judged
    lines = unread = 0
    log = ctx.wire_log()
    for index, entry in enumerate(log):
        if entry.get("channel") != "stdout" or entry.get("dir") != "recv":
            continue
        lines += 1
        if "note" in entry and "text" not in entry and "base64" not in entry:
            unread += 1  # a line past the message cap, discarded unread
            continue
        if "base64" in entry:
            missed(
                "stdout carried bytes that are not UTF-8",
                why=bytes_text(base64.b64decode(entry["base64"]), 120),
                **drawn_by(ctx, log, index),
            )
        frame = classify(entry["text"].encode("utf-8")) if "truncated_from" not in entry else None
        if frame is not None and "oversize" in frame.extra:
            unread += 1
            continue
        if frame is not None and (frame.kind == "garbage" or not _message(frame.value, ctx.revision)):
            missed(
                f"stdout carried a line that is not a JSON-RPC message: {entry['text'][:120]!r}",
                **drawn_by(ctx, log, index),
            )
    if unread and unread == lines:
        skip(
            f"the {lines} stdout line(s) all exceeded the harness's caps and were not read: nothing to judge"
        )
    past = f" ({unread} past the harness's caps, not read)" if unread else ""
    ctx.note(f"{lines} stdout lines{past}, all JSON messages")


def _message(value: object, revision: str) -> bool:
    """A JSON object, or in 2025-03-26 (the one revision with JSON-RPC batches) an array of objects."""
    if isinstance(value, list) and revision in BATCH_REVISIONS:
        return bool(value) and all(isinstance(item, dict) for item in value)
    return isinstance(value, dict)


async def _exits_on_stdin_close(ctx: CaseContext) -> None:
    """No revision names a bound ("promptly", "a reasonable time"): the per-request timeout is the one
    the run already grants any answer, and only a server that misses it waits it out."""
    bound = ctx.options.timeout
    # The revision's shared session, at its end: a client closes stdin after its exchanges.
    session = await ctx.ending_session()
    took = await ctx.end_input(session, bound)
    if took is None:
        missed(
            f"the server was still running {bound:g} s after its stdin was closed "
            "(the client has to signal it)",
            diagnostics=session.adapter.diagnostics()[-500:],
        )
    ctx.note(f"exited {took:.2f} s after its stdin was closed")


@check(
    "base.stdio.exit-on-stdin-close",
    "BASE-STDIO-010",
    "the server exits when its stdin is closed",
    eras=("modern",),
    transports=("stdio",),
    ends_session=True,
)
async def exit_on_stdin_close(ctx: CaseContext) -> None:
    await _exits_on_stdin_close(ctx)


@check(
    "base.stdio.legacy-exit-on-stdin-close",
    "BASE-STDIO-011",
    "the server exits when its stdin is closed (legacy shutdown)",
    eras=("legacy",),
    transports=("stdio",),
    ends_session=True,
)
async def legacy_exit_on_stdin_close(ctx: CaseContext) -> None:
    await _exits_on_stdin_close(ctx)


@check(
    "base.stdio.no-server-requests",
    "BASE-STDIO-012",
    "no JSON-RPC requests on stdout in 2026-07-28",
    eras=("modern",),
    transports=("stdio",),
)
async def no_server_requests(ctx: CaseContext) -> None:
    """Judged over everything the server wrote to stdout in this revision's cases, like BASE-STDIO-001."""
    await ctx.request("server/discover")
    messages = 0
    for entry in ctx.wire_log():
        if entry.get("channel") != "stdout" or entry.get("dir") != "recv" or "text" not in entry:
            continue
        if "truncated_from" in entry:
            continue
        frame = classify(entry["text"].encode("utf-8"))
        messages += 1
        if frame.kind == "request":
            missed(
                f"the server wrote a JSON-RPC request to stdout: {entry['text'][:200]!r}",
                method=frame.value.get("method"),
            )
    if not messages:
        unjudgeable("no message from the server on stdout to judge")
    ctx.note(f"{messages} stdout messages, none a request")
