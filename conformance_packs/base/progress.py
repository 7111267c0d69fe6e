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
from typing import Any, NoReturn

from conformance.pack_api import (
    MODERN_REVISIONS,
    Call,
    CaseContext,
    Frame,
    Paced,
    TransportError,
    TransportTimeout,
    blocked,
    check,
    jsonrpc,
    missed,
    paced,
    skip,
)
from conformance_packs.base.common import Sweep, ToolCalls, call_sweep, no_callable_reason, succeeded
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
    #: The arguments sized to show progress (`conformance.arguments.pacing`), as `name=value`; "" when
    #: the call took the sweep's own arguments.
    paced: str = ""
    #: Seconds the sentinel after the call took to be answered: the server's round trip, against which
    #: a call's own time tells a tool that works a while from one that answers at once.
    round_trip: float = 0.0

    @property
    def all(self) -> list[Received]:
        return self.before + self.after

    @property
    def elapsed(self) -> float:
        return self.call.reply.elapsed


@dataclass
class ProgressCalls:
    calls: list[ProgressCall] = field(default_factory=list)
    #: The first tool that reported progress, called again without a token.
    untokened: ProgressCall | None = None
    why_none: str = ""
    #: Calls with sized arguments left unanswered within their budget (then cancelled), as report lines.
    over_budget: list[str] = field(default_factory=list)

    def reporting(self) -> list[ProgressCall]:
        return [c for c in self.calls if c.token is not None and c.all]

    def line(self) -> str:
        tools = [c.tool + (f" ({c.paced})" if c.paced else "") for c in self.reporting()]
        text = f"{len(self.calls)} tool(s) called with a progressToken; " + (
            f"progress reported by {', '.join(tools)}" if tools else "none reported progress"
        )
        if self.over_budget:
            text += "; no answer within the budget, cancelled: " + ", ".join(self.over_budget[:3])
        return text


#: The most seconds a call with sized arguments may take (it is cancelled then), and its share of the
#: request timeout when that is shorter: a tool that waits longer than asked costs a bounded time.
PACED_BUDGET = 5.0
PACED_SHARE = 0.5


def paced_budget(ctx: CaseContext) -> float:
    return min(PACED_BUDGET, ctx.options.timeout * PACED_SHARE)


@dataclass
class _Plan:
    """How one tool of the sweep is called with a progressToken: its sweep arguments, or sized ones."""

    tool: ToolCalls
    arguments: dict[str, Any]
    paced: Paced | None
    #: How long the sweep's call took (the timeout, when it got no answer): the slowest go first.
    slowness: float


def _plans(ctx: CaseContext, sweep: Sweep) -> list[_Plan]:
    """A plan per tool of the sweep that answered, or that got no answer with arguments that sizing
    changes (a call that ran out the timeout is not sent again with the same arguments)."""
    budget = paced_budget(ctx)
    plans = []
    for entry in sweep.tools:
        schema = entry.tool.get("inputSchema", {})
        if entry.success is not None:
            base = entry.arguments() or {}
            slowness = entry.success.reply.elapsed
        elif entry.timed_out:
            base = dict(entry.unanswered_arguments or {})  # the arguments whose call got no answer
            slowness = ctx.options.timeout
        else:
            continue
        sized = paced(schema, base, budget=budget)
        if entry.success is None and sized is None:
            continue
        plans.append(_Plan(entry, sized.arguments if sized else base, sized, slowness))
    # The slowest first: a tool that runs a while is the one likely to report its progress.
    plans.sort(key=lambda p: -p.slowness)
    return plans


async def _call(
    ctx: CaseContext,
    tool: str,
    arguments: dict[str, Any],
    token: str | None,
    sized: Paced | None = None,
) -> ProgressCall | None:
    """The call and the progress it drew; None when a call with sized arguments got no answer within
    its budget (it is cancelled then, as a client does with a request it stops waiting for)."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    mark = ctx.mark()
    if sized is None:
        call = await ctx.request("tools/call", params)
    else:
        call_or_none = await _budgeted(ctx, params)
        if call_or_none is None:
            return None
        call = call_or_none
    settle = await sentinel(ctx)  # what arrives for the call after its answer, arrives before the sentinel's
    entry = ProgressCall(tool, arguments, token, call, paced=sized.line() if sized else "")
    entry.round_trip = settle.reply.elapsed
    request_id = call.request["id"] if call.request else None
    answered = False
    for message in received_since(ctx, mark):
        if message.answers(request_id):
            answered = True
        elif message.method == "notifications/progress":
            (entry.after if answered else entry.before).append(message)
    return entry


async def _budgeted(ctx: CaseContext, params: dict[str, Any]) -> Call | None:
    """tools/call bounded by the paced budget; past it, the request is cancelled (2026-07-28 over
    Streamable HTTP: closing its stream is the cancellation; elsewhere notifications/cancelled)."""
    session = await ctx.session()
    request_id = f"conformance-paced-{next(_TOKENS)}"
    try:
        call = await session.request("tools/call", params, timeout=paced_budget(ctx), msg_id=request_id)
    except TransportTimeout:
        if not (ctx.era == "modern" and ctx.transport == "http"):
            await session.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": "over budget"}
            )
        return None
    ctx.calls.append(call)
    return call


async def progress_calls(ctx: CaseContext) -> ProgressCalls:
    """Each callable tool the sweep could call, called again with a progressToken (once per (target,
    revision)), with arguments sized to show progress where its schema says how; the first that
    reported progress, once more without one."""

    async def run() -> ProgressCalls:
        out = ProgressCalls()
        sweep = await call_sweep(ctx)
        chosen = _plans(ctx, sweep)[:MAX_PROGRESS_TOOLS]
        if not chosen:
            out.why_none = (
                "no tool is callable: " + no_callable_reason(ctx, sweep.listed)
                if not sweep.tools
                else "no callable tool succeeded in the sweep"
            )
            _name_slow(ctx, sweep, out)
            return out
        for plan in chosen:
            token = f"conformance-progress-{next(_TOKENS)}"
            entry = await _call(ctx, plan.tool.name, plan.arguments, token, plan.paced)
            if entry is None and plan.paced is not None:
                out.over_budget.append(f"{plan.tool.name!r} ({plan.paced.line()})")
            if plan.paced is not None and plan.tool.success is not None and not _succeeded(entry):
                # The sized arguments were refused or ran over: the sweep's own, which answered, then.
                entry = await _call(ctx, plan.tool.name, plan.tool.arguments() or {}, token)
            if entry is not None:
                out.calls.append(entry)
        reporting = out.reporting()
        if reporting:
            first = reporting[0]
            sized = next((p.paced for p in chosen if p.tool.name == first.tool and first.paced), None)
            out.untokened = await _call(ctx, first.tool, first.arguments, None, sized)
        else:
            out.why_none = "no callable tool sent notifications/progress for a request with a progressToken"
            _name_slow(ctx, sweep, out)
        return out

    return await ctx.remember_once("progress-calls", "calling the tools with a progressToken", run)


def _succeeded(entry: ProgressCall | None) -> bool:
    return entry is not None and succeeded(entry.call) is not None


def _name_slow(ctx: CaseContext, sweep: Sweep, out: ProgressCalls) -> None:
    """Name the tools that got no answer within the timeout and could not be sized smaller."""
    slow = [t.name for t in sweep.tools if t.timed_out and not any(c.tool == t.name for c in out.calls)]
    if slow:
        # A tool that reports progress is often one that runs longer than the request timeout.
        out.why_none += (
            f"; {', '.join(repr(n) for n in slow[:3])} got no answer within "
            f"{ctx.options.timeout:g} s (a longer --timeout may let it be judged)"
        )


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
    count, pairs = 0, 0
    for entry in calls.reporting():
        values: list[Any] = [m.params.get("progress") for m in entry.all]
        count += len(values)
        for earlier, later in itertools.pairwise(values):
            pairs += 1
            if not (_number(earlier) and _number(later) and float(later) > float(earlier)):
                missed(
                    f"tools/call {entry.tool!r}: progress {later!r} followed {earlier!r} "
                    f"(all: {values[:20]!r})",
                    **entry.call.excerpt(),
                )
    if not pairs:
        # An increase is between two values of one call: a single value per call judges nothing.
        skip(
            f"no call drew two progress notifications ({count} value(s) in all), so no increase could be "
            "judged; " + calls.line()
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
    # The sentinel as the session answers it before any cancellation: a server whose ping is answered
    # with an error anyway (no ping method) has broken BASE-PING-001, which says nothing of cancellations.
    before = await sentinel(ctx)
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
            f"the server answered a notifications/cancelled ({answers[0].text(200)}): a reply to a"
            " notification is BASE-NOTIF-001's to judge",
        )
    if call.result is None:
        got = call.drew()
        if before.result is None and sentinel_method(ctx) == "ping":
            blocked(
                "base.ping.empty-result",
                f"the next request (ping) drew {got}, as a ping did before any cancellation"
                f" ({before.drew()}): the server's ping is BASE-PING-001's to judge",
            )
        missed(
            f"after the cancellations the server answered the next request ({sentinel_method(ctx)}) with"
            f" {got}, not a result (before them it was answered with a result)",
            **call.excerpt(),
        )


_CANCEL_IDS = itertools.count(1)


def still_running(frame: Frame) -> bool:
    """A progress notification below its total (or without one): the call it reports on still runs, so
    a cancellation sent now finds it running. Any token: one not the request's is BASE-PROG-001's."""
    message = frame.value
    if not isinstance(message, dict) or message.get("method") != "notifications/progress":
        return False
    params = message.get("params")
    return _below_total(params if isinstance(params, dict) else {})


def _below_total(params: dict[str, Any]) -> bool:
    progress, total = params.get("progress"), params.get("total")
    if isinstance(progress, int | float) and isinstance(total, int | float):
        return progress < total
    return True


@check(
    "base.cancel.no-response",
    "BASE-CANCEL-002",
    "no response after a cancellation",
    capability="tools",
)
async def no_response(ctx: CaseContext) -> None:
    if ctx.transport == "http":
        _not_over_streamable_http(ctx)
    calls = await progress_calls(ctx)
    # A progress below its total shows the call still running; a tool whose only progress is its last
    # step shows nothing until it ends, so it is cancelled like one that sleeps.
    reporting = [c for c in calls.reporting() if any(_below_total(m.params) for m in c.before)]
    session = await ctx.session()
    request_id = f"conformance-cancel-{next(_CANCEL_IDS)}"
    mark = ctx.mark()
    if reporting:
        target = reporting[0]
        params = {"name": target.tool, "arguments": target.arguments, "_meta": {"progressToken": request_id}}
        started = await session.send_until(
            raw_request(session, request_id, "tools/call", params), expect_id=request_id, until=still_running
        )
        if started.reply.response is not None:
            skip(
                f"tools/call {target.tool!r} was answered before a progress below its total: "
                "nothing to cancel"
            )
    else:
        target = _sleeper(calls)
        params = {"name": target.tool, "arguments": target.arguments}
        # No progress shows that it runs: a sentinel answered while the call is unanswered does.
        probe = await session.probe(
            raw_request(session, request_id, "tools/call", params), expect_id=request_id
        )
        if probe.answered or probe.closed:
            skip(
                f"tools/call {target.tool!r} (it took {target.elapsed:.2f} s before) was answered before the "
                f"{sentinel_method(ctx)} sent after it: nothing in flight to cancel"
            )
    await session.notify("notifications/cancelled", {"requestId": request_id, "reason": "conformance check"})
    settle = await sentinel(ctx)
    # The same call again is the clock: a server that ignored the cancellation answers it before this.
    clock = {**params, "_meta": {"progressToken": f"{request_id}-clock"}} if reporting else dict(params)
    if target.paced:
        await _budgeted(ctx, clock)
    else:
        await ctx.request("tools/call", clock)
    messages = received_since(ctx, mark)
    settle_id = settle.request["id"] if settle.request else None
    settled_at = next((m.index for m in messages if m.answers(settle_id)), None)
    answer = next((m for m in messages if m.answers(request_id)), None)
    how = (
        "once a progress below its total showed it running"
        if reporting
        else "while it ran (sent no progress before its end)"
    )
    if answer is None:
        ctx.note(f"tools/call {target.tool!r}{_with(target)} was cancelled {how} and drew no response")
        return
    _judge_answer(ctx, target, how, answer, settled_at)


def _judge_answer(
    ctx: CaseContext, target: ProgressCall, how: str, answer: Received, settled_at: int | None
) -> None:
    """Judge the answer a cancelled call drew by what it is and when it came.

    An error that names the cancellation was written after the server read it, whenever it arrives: a
    response for the cancelled request the server chose to send (2026-07-28 over stdio: "MUST NOT send
    any further messages for it"; before, the SHOULD). Any other answer that comes once a request sent
    after the cancellation is answered shows the server still working on the call; every revision lets
    a server ignore a cancellation of a request it cannot cancel, so that is the SHOULD. Any other
    answer before it may have crossed the cancellation: SKIP.
    """
    late = settled_at is not None and answer.index > settled_at
    call = f"tools/call {target.tool!r}{_with(target)}, cancelled {how},"
    if names_cancellation(answer):
        when = "once it had answered a request sent after it" if late else "after reading the cancellation"
        missed(f"{call} was answered with an error about the cancellation, {when}: {answer.text()}")
    if late:
        ctx.miss_should(
            f"{call} was answered once the server had answered a request sent after the cancellation "
            f"(held at the SHOULD: a server may ignore a cancellation it cannot honour): {answer.text()}"
        )
        return
    skip(
        f"tools/call {target.tool!r} was answered before the request after the cancellation: the answer may "
        "have crossed the cancellation (a completed request may ignore it)"
    )


def names_cancellation(answer: Received) -> bool:
    """An error answer about the cancellation: LSP's RequestCancelled code (-32800), which SDKs send, or
    a message that says it was cancelled. Only the cancellation's reader can write it."""
    error = answer.value.get("error")
    if not isinstance(error, dict):
        return False
    message = error.get("message")
    return error.get("code") == jsonrpc.REQUEST_CANCELLED or (
        isinstance(message, str) and "cancel" in message.lower()
    )


def _not_over_streamable_http(ctx: CaseContext) -> NoReturn:
    """Why this row is SKIP over Streamable HTTP (stdio and HTTP+SSE, whose answers share one stream,
    judge it)."""
    if ctx.era == "modern":
        skip(
            "over Streamable HTTP in 2026-07-28, closing the request's stream is its cancellation (\"No "
            'notifications/cancelled message is required or expected"), after which no answer can reach '
            "the client: nothing to observe"
        )
    skip(
        "not judged over Streamable HTTP: the cancelled call's answer would come on its own POST's stream, "
        "which this check does not hold open while it cancels (over stdio and HTTP+SSE it is judged)"
    )


#: A call that reported no progress is taken for one that works a while (sleeps) when it took this many
#: times the server's round trip, and at least SLEEP_FLOOR seconds: then a sentinel sent right after it
#: is answered first by any server that handles requests concurrently.
SLEEP_FACTOR = 10.0
SLEEP_FLOOR = 0.05


def _sleeper(calls: ProgressCalls) -> ProgressCall:
    """The slowest call that took measurably long without reporting progress; SKIP when none did."""
    slow = [
        c
        for c in calls.calls
        if c.elapsed >= max(SLEEP_FLOOR, SLEEP_FACTOR * c.round_trip) and succeeded(c.call) is not None
    ]
    if not slow:
        why = (
            "no progress showed a call still running (each came with the last step)"
            if calls.reporting()
            else calls.why_none or "no callable tool reported progress"
        )
        skip(
            f"{why}, and none took measurably long (at least {SLEEP_FLOOR:g} s and {SLEEP_FACTOR:g} times "
            "the server's round trip) to be cancelled while it ran"
            + (f" ({calls.line()})" if calls.calls else "")
        )
    return max(slow, key=lambda c: c.elapsed)


def _with(call: ProgressCall) -> str:
    return f" (arguments sized: {call.paced})" if call.paced else ""


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
