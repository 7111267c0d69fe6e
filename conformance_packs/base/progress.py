"""Progress notifications and cancellation, judged on the tools the server lists.

Which tool reports progress is not known in advance: each tool the `--call-tools` policy allows and
the sweep could call is called once more with the same arguments and a progressToken, and the first one
that answers with progress notifications is the one the cancellation check cancels. A server none of
whose callable tools reports progress is SKIP, saying so.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from conformance.engine.api import TransportError
from conformance.engine.checks import blocked, check, missed, skip
from conformance.engine.context import CaseContext
from conformance.protocol.jsonrpc import Frame
from conformance.protocol.session import Call
from conformance.protocol.versions import MODERN_REVISIONS
from conformance_packs.base.common import call_sweep, memo, no_callable_reason
from conformance_packs.base.received import (
    Received,
    ids_sent_before,
    raw_request,
    received_since,
    sentinel,
    sentinel_method,
)

#: Tools called again with a progressToken (a server may offer hundreds).
MAX_PROGRESS_TOOLS = 8
_TOKENS = itertools.count(1)


@dataclass
class ProgressCall:
    """One tools/call made with (or without) a progressToken, and the progress it drew."""

    tool: str
    arguments: dict[str, Any]
    token: str | None
    call: Call
    #: notifications/progress received from the request until the sentinel after its answer.
    before: list[Received] = field(default_factory=list)
    after: list[Received] = field(default_factory=list)

    @property
    def all(self) -> list[Received]:
        return self.before + self.after


@dataclass
class ProgressCalls:
    calls: list[ProgressCall] = field(default_factory=list)
    #: The first tool that reported progress, called again without a token.
    untokened: ProgressCall | None = None
    why_none: str = ""

    def reporting(self) -> list[ProgressCall]:
        return [c for c in self.calls if c.token is not None and c.all]

    def line(self) -> str:
        tools = [c.tool for c in self.reporting()]
        return f"{len(self.calls)} tool(s) called with a progressToken; " + (
            f"progress reported by {', '.join(tools)}" if tools else "none reported progress"
        )


async def _call(ctx: CaseContext, tool: str, arguments: dict[str, Any], token: str | None) -> ProgressCall:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    mark = ctx.mark()
    call = await ctx.request("tools/call", params)
    await sentinel(ctx)  # what arrives for the call after its answer, arrives before the sentinel's
    entry = ProgressCall(tool, arguments, token, call)
    request_id = call.request["id"] if call.request else None
    answered = False
    for message in received_since(ctx, mark):
        if message.answers(request_id):
            answered = True
        elif message.method == "notifications/progress":
            (entry.after if answered else entry.before).append(message)
    return entry


async def progress_calls(ctx: CaseContext) -> ProgressCalls:
    """Each callable tool that succeeded in the sweep, called again with a progressToken (once per
    (target, revision)); the first that reported progress, once more without one."""

    async def run() -> ProgressCalls:
        out = ProgressCalls()
        sweep = await call_sweep(ctx)
        succeeded = [t for t in sweep.tools if t.success is not None]
        # The slowest first: a tool that runs a while is the one likely to report its progress.
        succeeded.sort(key=lambda t: -t.success.reply.elapsed if t.success is not None else 0.0)
        chosen = succeeded[:MAX_PROGRESS_TOOLS]
        if not chosen:
            out.why_none = (
                "no tool is callable: " + no_callable_reason(ctx, sweep.listed)
                if not sweep.tools
                else "no callable tool succeeded in the sweep"
            )
            return out
        for tool in chosen:
            token = f"conformance-progress-{next(_TOKENS)}"
            out.calls.append(await _call(ctx, tool.name, tool.arguments() or {}, token))
        reporting = out.reporting()
        if reporting:
            first = reporting[0]
            out.untokened = await _call(ctx, first.tool, first.arguments, None)
        else:
            out.why_none = "no callable tool sent notifications/progress for a request with a progressToken"
            slow = [t.name for t in sweep.tools if t.timed_out]
            if slow:
                # A tool that reports progress is often one that runs longer than the request timeout.
                out.why_none += (
                    f"; {', '.join(repr(n) for n in slow[:3])} got no answer within "
                    f"{ctx.options.timeout:g} s (a longer --timeout may let it be judged)"
                )
        return out

    return await memo(ctx, "progress-calls", "calling the tools with a progressToken", run)


async def _reporting(ctx: CaseContext) -> ProgressCalls:
    calls = await progress_calls(ctx)
    if not calls.reporting():
        skip(calls.why_none + (f" ({calls.line()})" if calls.calls else ""))
    return calls


@check(
    "base.progress.token-match",
    "BASE-PROG-001",
    "progress only for a token the client sent",
    capability="tools",
)
async def token_match(ctx: CaseContext) -> None:
    calls = await _reporting(ctx)
    for entry in calls.calls:
        for message in entry.all:
            token = message.params.get("progressToken")
            if token != entry.token:
                missed(
                    f"tools/call {entry.tool!r} with progressToken {entry.token!r} drew a progress "
                    f"notification for {token!r}: {message.text()}",
                    **entry.call.excerpt(),
                )
    untokened = calls.untokened
    if untokened is not None and untokened.all:
        missed(
            f"tools/call {untokened.tool!r} without a progressToken drew progress: {untokened.all[0].text()}",
            **untokened.call.excerpt(),
        )
    ctx.note(calls.line() + "; the first was called again without a token and drew none")


@check(
    "base.progress.increases",
    "BASE-PROG-002",
    "progress increases with each notification",
    capability="tools",
)
async def increases(ctx: CaseContext) -> None:
    calls = await _reporting(ctx)
    count = 0
    for entry in calls.reporting():
        values: list[Any] = [m.params.get("progress") for m in entry.all]
        count += len(values)
        for earlier, later in itertools.pairwise(values):
            if not (_number(earlier) and _number(later) and float(later) > float(earlier)):
                missed(
                    f"tools/call {entry.tool!r}: progress {later!r} followed {earlier!r} "
                    f"(all: {values[:20]!r})",
                    **entry.call.excerpt(),
                )
    ctx.note(f"{count} progress value(s) in order; " + calls.line())


@check("base.progress.stops", "BASE-PROG-003", "no progress after the final response", capability="tools")
async def stops(ctx: CaseContext) -> None:
    calls = await _reporting(ctx)
    for entry in calls.calls:
        late = [m for m in entry.after if m.params.get("progressToken") == entry.token]
        if late and entry.token is not None:
            missed(
                f"tools/call {entry.tool!r}: progress for {entry.token!r} after its response: "
                + late[0].text(),
                **entry.call.excerpt(),
            )
    ctx.note("each call's progress ended with its response; " + calls.line())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def progress_problem(params: dict[str, Any]) -> str:
    token = params.get("progressToken")
    if not isinstance(token, str) and not (isinstance(token, int) and not isinstance(token, bool)):
        return f"progressToken {token!r} is neither a string nor an integer"
    if not _number(params.get("progress")):
        return f"progress {params.get('progress')!r} is not a number"
    if "total" in params and not _number(params["total"]):
        return f"total {params['total']!r} is not a number"
    if "message" in params and not isinstance(params["message"], str):
        return f"message {params['message']!r} is not a string"
    return ""


@check("base.progress.shape", "BASE-PROG-004", "progress notifications are well formed", capability="tools")
async def shape(ctx: CaseContext) -> None:
    calls = await _reporting(ctx)
    for entry in calls.calls:
        for message in entry.all:
            problem = progress_problem(message.params)
            if problem:
                missed(f"tools/call {entry.tool!r}: {problem}: {message.text()}", **entry.call.excerpt())
    ctx.note(calls.line())


# ---------------------------------------------------------------------------------------------- cancel


@check("base.cancel.invalid-ignored", "BASE-CANCEL-001", "invalid cancellations are ignored")
async def invalid_ignored(ctx: CaseContext) -> None:
    session = await ctx.session()
    probes = {
        "an unknown request id": {"requestId": "conformance-never-sent-7f3a", "reason": "conformance probe"},
        "no requestId": {"reason": "conformance probe"},
    }
    mark = ctx.mark()
    refused = False
    for what, params in probes.items():
        status = (await session.notify("notifications/cancelled", params)).reply.status
        if status is not None and status >= 400:
            # Over HTTP a refusal's body is the transport's error, not an answer to the notification.
            refused = True
            ctx.note(f"HTTP {status} to notifications/cancelled with {what} (a refusal, not an answer)")
    try:
        call = await sentinel(ctx)
    except TransportError as exc:
        # The session is gone or hung (the runner restarts it for the next case): not ignored.
        missed(f"after the cancellations the server did not answer the next request ({exc.kind}: {exc})")
    if call.result is None:
        got = call.drew()
        missed(
            f"after the cancellations the server answered the next request ({sentinel_method(ctx)}) with"
            f" {got}, not a result",
            **call.excerpt(),
        )
    settle_id = call.request["id"] if call.request else None
    earlier = ids_sent_before(ctx, mark)  # a late or repeated answer to an earlier request is not one
    answers = [
        m
        for m in received_since(ctx, mark)
        if m.is_answer and not m.answers(settle_id) and json.dumps(m.value.get("id")) not in earlier
    ]
    if answers and not refused:
        # A reply to a notification, whatever it says, breaks BASE-NOTIF-001's MUST NOT, which sends
        # both of these cancellations: one defect, judged there.
        blocked(
            "base.notif.no-response",
            f"the server answered a notifications/cancelled ({answers[0].text(200)}), and the next request"
            " too: a reply to a notification is BASE-NOTIF-001's to judge",
        )


_CANCEL_IDS = itertools.count(1)


def still_running(frame: Frame) -> bool:
    """A progress notification below its total (or without one): the call it reports on still runs, so
    a cancellation sent now finds it running. Any token: one not the request's is BASE-PROG-001's."""
    message = frame.value
    if not isinstance(message, dict) or message.get("method") != "notifications/progress":
        return False
    params = message.get("params")
    if not isinstance(params, dict):
        return True
    progress, total = params.get("progress"), params.get("total")
    if isinstance(progress, int | float) and isinstance(total, int | float):
        return progress < total
    return True


@check(
    "base.cancel.no-response",
    "BASE-CANCEL-002",
    "no response after a cancellation",
    capability="tools",
    transports=("stdio",),
)
async def no_response(ctx: CaseContext) -> None:
    calls = await _reporting(ctx)
    target = calls.reporting()[0]
    session = await ctx.session()
    request_id = f"conformance-cancel-{next(_CANCEL_IDS)}"
    params = {"name": target.tool, "arguments": target.arguments, "_meta": {"progressToken": request_id}}
    mark = ctx.mark()
    started = await session.send_until(
        raw_request(session, request_id, "tools/call", params), expect_id=request_id, until=still_running
    )
    if started.reply.response is not None:
        skip(f"tools/call {target.tool!r} was answered before a progress below its total: nothing to cancel")
    await session.notify("notifications/cancelled", {"requestId": request_id, "reason": "conformance check"})
    settle = await sentinel(ctx)
    # The same call again is the clock: a server that ignored the cancellation answers it before this.
    clock = {**params, "_meta": {"progressToken": f"{request_id}-clock"}}
    await ctx.request("tools/call", clock)
    messages = received_since(ctx, mark)
    settle_id = settle.request["id"] if settle.request else None
    settled_at = next((m.index for m in messages if m.answers(settle_id)), None)
    answer = next((m for m in messages if m.answers(request_id)), None)
    if answer is None:
        ctx.note(f"tools/call {target.tool!r} was cancelled mid-way and drew no response")
        return
    if settled_at is not None and answer.index > settled_at:
        missed(
            f"tools/call {target.tool!r} was answered after its cancellation, once the server had answered "
            f"a request sent after the cancellation: {answer.text()}"
        )
    skip(
        f"tools/call {target.tool!r} was answered before the request after the cancellation: the answer may "
        "have crossed the cancellation (a completed request may ignore it)"
    )


@check(
    "base.cancel.server-sends-none",
    "BASE-CANCEL-003",
    "the server sends notifications/cancelled only to end a listen stream",
    revisions=MODERN_REVISIONS,
)
async def server_sends_none(ctx: CaseContext) -> None:
    await progress_calls(ctx)
    messages = received_since(ctx, 0)
    for message in messages:
        if message.method != "notifications/cancelled":
            continue
        request_id = message.params.get("requestId")
        if not (isinstance(request_id, str) and request_id.startswith("conformance-listen-")):
            missed(f"the server sent notifications/cancelled for {request_id!r}: {message.text()}")
    ctx.note(f"{len(messages)} message(s) the server sent in this session read")
