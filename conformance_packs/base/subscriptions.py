"""Resource subscriptions: legacy resources/subscribe and unsubscribe (through 2025-11-25), and
2026-07-28's subscriptions/listen, each only where the server declares `resources.subscribe`.

A black-box client can change a resource only by reading it, so each flow reads the listed resources
while subscribed: a server whose resources change when read (a counter) sends updates then; one whose
resources do not change sends none, and the checks that need an update SKIP saying so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    Call,
    CaseContext,
    blocked,
    check,
    missed,
    skip,
)
from conformance_packs.base.common import expect_declared_result
from conformance_packs.base.listening import ListenFlow, listen_during
from conformance_packs.base.received import Received, received_since, sentinel

#: Listed resources subscribed to and read (a server may list thousands).
MAX_SUBSCRIBED = 10
UPDATED = "notifications/resources/updated"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: Where subscriptions/listen is judged: on stdio and the legacy SSE stream its notifications share the
#: channel, read like any other message; over Streamable HTTP its answer is an SSE stream that stays open,
#: held while the resources are read (`HttpAdapter.listen` with the request as its body) and closed at the
#: end, which is the listen's cancellation there.
LISTEN_TRANSPORTS = ("stdio", "sse", "http")


def _subscribe_declared(ctx: CaseContext) -> None:
    resources = ctx.identity.capabilities.get("resources") if ctx.identity.capabilities else None
    if not (isinstance(resources, dict) and resources.get("subscribe") is True):
        skip("the server does not declare resources.subscribe")


async def _uris(ctx: CaseContext) -> list[str]:
    items = (await ctx.list_all("resources/list", "resources")).items
    uris = [r["uri"] for r in items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    if not uris:
        skip("resources/list offers no resource to subscribe to")
    return uris[:MAX_SUBSCRIBED]


async def _read_all(ctx: CaseContext, uris: list[str]) -> list[Received]:
    """Read each URI, then the sentinel: the updates the reads caused, in order."""
    mark = ctx.mark()
    for uri in uris:
        await ctx.request("resources/read", {"uri": uri})
    await sentinel(ctx)
    return [m for m in received_since(ctx, mark) if m.method == UPDATED]


# ---------------------------------------------------------------------------------------------- legacy


@dataclass
class LegacyFlow:
    uris: list[str]
    subscribed: list[tuple[str, Call]] = field(default_factory=list)
    unsubscribed: list[tuple[str, Call]] = field(default_factory=list)
    #: Updates seen before subscribing, while subscribed, and after unsubscribing.
    before: list[Received] = field(default_factory=list)
    during: list[Received] = field(default_factory=list)
    after: list[Received] = field(default_factory=list)


async def legacy_flow(ctx: CaseContext) -> LegacyFlow:
    _subscribe_declared(ctx)
    uris = await _uris(ctx)

    async def run() -> LegacyFlow:
        flow = LegacyFlow(uris)
        flow.before = await _read_all(ctx, uris)
        for uri in uris:
            flow.subscribed.append((uri, await ctx.request("resources/subscribe", {"uri": uri})))
        flow.during = await _read_all(ctx, uris)
        for uri in uris:
            flow.unsubscribed.append((uri, await ctx.request("resources/unsubscribe", {"uri": uri})))
        flow.after = await _read_all(ctx, uris)
        return flow

    return await ctx.remember_once("legacy-subscriptions", "subscribing to the listed resources", run)


def _answered_with_result(ctx: CaseContext, method: str, calls: list[tuple[str, Call]]) -> None:
    """Each call answered with a result object (`expect_declared_result`: a refusal is WARN)."""
    for uri, call in calls:
        expect_declared_result(call, f"{method} of {uri!r}", "resources.subscribe")
    ctx.note(f"{method} answered for {len(calls)} listed resource(s)")


@check(
    "base.subscribe.answered",
    "BASE-SUB-001",
    "resources/subscribe is answered when subscribe is declared",
    capability="resources",
    revisions=LEGACY_REVISIONS,
)
async def subscribe_answered(ctx: CaseContext) -> None:
    flow = await legacy_flow(ctx)
    _answered_with_result(ctx, "resources/subscribe", flow.subscribed)


@check(
    "base.subscribe.unsubscribe-answered",
    "BASE-SUB-002",
    "resources/unsubscribe is answered when subscribe is declared",
    capability="resources",
    revisions=LEGACY_REVISIONS,
)
async def unsubscribe_answered(ctx: CaseContext) -> None:
    flow = await legacy_flow(ctx)
    _answered_with_result(ctx, "resources/unsubscribe", flow.unsubscribed)


def _updated_problem(message: Received) -> str:
    if not isinstance(message.params.get("uri"), str):
        return f"{UPDATED} without a string params.uri: {message.text()}"
    return ""


def _judge_updates(ctx: CaseContext, updates: list[Received]) -> None:
    if not updates:
        skip("no notifications/resources/updated came while subscribed (reading changed no resource)")
    for message in updates:
        problem = _updated_problem(message)
        if problem:
            missed(problem)
    ctx.note(f"{len(updates)} update(s) judged")


@check(
    "base.subscribe.updated-shape",
    "BASE-SUB-003",
    "notifications/resources/updated names the resource",
    capability="resources",
    revisions=LEGACY_REVISIONS,
)
async def updated_shape(ctx: CaseContext) -> None:
    legacy = await legacy_flow(ctx)
    _judge_updates(ctx, legacy.before + legacy.during + legacy.after)


@check(
    "base.subscribe.only-subscribed",
    "BASE-SUB-004",
    "updates only while subscribed",
    capability="resources",
    revisions=LEGACY_REVISIONS,
)
async def only_subscribed(ctx: CaseContext) -> None:
    flow = await legacy_flow(ctx)
    if not flow.during:
        skip("no notifications/resources/updated came while subscribed (reading changed no resource)")
    if flow.before:
        missed(f"an update came before any resources/subscribe: {flow.before[0].text()}")
    if flow.after:
        missed(f"an update came after resources/unsubscribe: {flow.after[0].text()}")
    ctx.note(f"{len(flow.during)} update(s) while subscribed, none before subscribing or after unsubscribing")


# ---------------------------------------------------------------------------------------------- listen


async def listen_flow(ctx: CaseContext) -> ListenFlow:
    """subscriptions/listen for the listed resources, the reads, then its cancellation."""
    _subscribe_declared(ctx)
    uris = await _uris(ctx)

    async def read_each() -> float:
        started = time.monotonic()
        for uri in uris:
            await ctx.request("resources/read", {"uri": uri})
        return (time.monotonic() - started) / len(uris)

    async def run() -> ListenFlow:
        params: dict[str, Any] = {"notifications": {"resourceSubscriptions": uris}}
        flow = await listen_during(ctx, params, read_each, lambda events: _updates(events) >= len(uris))
        flow.uris = uris
        return flow

    return await ctx.remember_once("listen-flow", "listening to the listed resources", run)


def _updates(events: list[Any]) -> int:
    """notifications/resources/updated carried by a held stream's events so far."""
    return sum(
        1
        for e in events
        if e.frame is not None and isinstance(e.frame.value, dict) and e.frame.value.get("method") == UPDATED
    )


def _failed(flow: ListenFlow) -> None:
    """The listen drew nothing to read: the acknowledgment row FAILs it; the others are blocked by it."""
    if flow.failure:
        blocked(
            "base.listen.acknowledged-first", f"subscriptions/listen drew no stream to read: {flow.failure}"
        )


@check(
    "base.listen.updated-shape",
    "BASE-SUB-003",
    "notifications/resources/updated names the resource (listen)",
    capability="resources",
    revisions=MODERN_REVISIONS,
    transports=LISTEN_TRANSPORTS,
)
async def listen_updated_shape(ctx: CaseContext) -> None:
    flow = await listen_flow(ctx)
    _failed(flow)
    _judge_updates(ctx, [m for m in flow.messages if m.method == UPDATED])


@check(
    "base.listen.acknowledged-first",
    "BASE-SUB-010",
    "subscriptions/listen is acknowledged first",
    capability="resources",
    revisions=MODERN_REVISIONS,
    transports=LISTEN_TRANSPORTS,
)
async def acknowledged_first(ctx: CaseContext) -> None:
    flow = await listen_flow(ctx)
    if flow.closed:
        missed(f"the server ended its stream after subscriptions/listen: {flow.closed}")
    if flow.failure:
        missed(f"subscriptions/listen drew no acknowledgment: {flow.failure}")
    ours = [m for m in flow.messages if m.subscription == flow.listen_id or m.answers(flow.listen_id)]
    if not ours:
        missed(f"no message carried the subscription id {flow.listen_id!r}: no acknowledgment came")
    first = ours[0]
    if first.answers(flow.listen_id) and "error" in first.value:
        skip(f"the server refused subscriptions/listen: {first.text()}")
    if first.method != ACKNOWLEDGED:
        missed(f"the first message of subscription {flow.listen_id!r} is not {ACKNOWLEDGED}: {first.text()}")
    ctx.note(f"acknowledged: {first.text(300)}")


@check(
    "base.listen.only-requested",
    "BASE-SUB-011",
    "a listen stream carries only the requested kinds",
    capability="resources",
    revisions=MODERN_REVISIONS,
    transports=LISTEN_TRANSPORTS,
)
async def only_requested(ctx: CaseContext) -> None:
    flow = await listen_flow(ctx)
    _failed(flow)
    tagged = [m for m in flow.tagged() if not m.is_answer]
    if not tagged:
        skip(f"no notification carried the subscription id {flow.listen_id!r}")
    for message in tagged:
        if message.method == ACKNOWLEDGED:
            continue
        if message.method != UPDATED:
            missed(f"subscription {flow.listen_id!r} (resourceSubscriptions only) carried {message.text()}")
        if message.params.get("uri") not in flow.uris:
            missed(
                f"subscription {flow.listen_id!r} carried an update for a URI not requested: {message.text()}"
            )
    untagged = [m for m in flow.messages if m.method.endswith("/list_changed") and m.subscription is None]
    if untagged:
        missed(f"a change notification came on no subscription: {untagged[0].text()}")
    ctx.note(f"{len(tagged)} notification(s) on subscription {flow.listen_id!r}, all requested kinds")


@check(
    "base.listen.tagged",
    "BASE-SUB-012",
    "listen notifications carry the subscription id",
    capability="resources",
    revisions=MODERN_REVISIONS,
    transports=LISTEN_TRANSPORTS,
)
async def tagged(ctx: CaseContext) -> None:
    flow = await listen_flow(ctx)
    _failed(flow)
    updates = [m for m in flow.messages if m.method == UPDATED and m.params.get("uri") in flow.uris]
    if not updates:
        skip("no notifications/resources/updated came for the listened resources (reading changed none)")
    for message in updates:
        if message.subscription != flow.listen_id:
            missed(
                f"an update for a listened resource carries subscription id {message.subscription!r}, "
                f"not {flow.listen_id!r}: {message.text()}"
            )
    ctx.note(f"{len(updates)} update(s), each tagged {flow.listen_id!r}")
