"""Capabilities: a server serves what it declares, refuses what it does not, and sends only what it may.

Why: a client reads the declared capabilities to decide what to ask; a feature served undeclared is
invisible to it, and a notification for a capability never declared is one it did not agree to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.pack_api import (
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    Call,
    CaseContext,
    check,
    jsonrpc,
    missed,
    skip,
    unjudgeable,
)
from conformance_packs.base.wirelog import excerpt, read_log

#: 2025-03-26 added the completions capability (2024-11-05 had completion/complete without one).
FIRST_COMPLETIONS = "2025-03-26"
UNKNOWN_PROMPT = "conformance_no_such_prompt_7f3a"


@dataclass(frozen=True)
class Feature:
    """A server capability and the request that uses it, with the list key whose items show it served."""

    capability: str
    method: str
    params: dict[str, Any] | None
    #: The result member whose non-empty value shows the feature is served ("" : any result does not).
    served_by: str
    revisions: tuple[str, ...]


ALL = (*LEGACY_REVISIONS, *MODERN_REVISIONS)
FEATURES = (
    Feature("tools", "tools/list", None, "tools", ALL),
    Feature("resources", "resources/list", None, "resources", ALL),
    Feature("prompts", "prompts/list", None, "prompts", ALL),
    # 2026-07-28 has no logging/setLevel (the level travels in each request's _meta).
    Feature("logging", "logging/setLevel", {"level": "info"}, "", LEGACY_REVISIONS),
    Feature(
        "completions",
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": UNKNOWN_PROMPT}, "argument": {"name": "x", "value": ""}},
        "completion",
        tuple(r for r in ALL if r >= FIRST_COMPLETIONS),
    ),
)


def _served(feature: Feature, call: Call) -> bool:
    """Whether the answer serves the feature: a result whose list (or completion values) is not empty."""
    result = call.result
    if not isinstance(result, dict) or not feature.served_by:
        return False
    value = result.get(feature.served_by)
    if isinstance(value, dict):  # completion/complete: {"completion": {"values": [...]}}
        value = value.get("values")
    return isinstance(value, list) and bool(value)


async def _undeclared(ctx: CaseContext) -> list[tuple[Feature, Call]]:
    """Each feature of this revision the server does not declare, with the answer to its request.

    Each check sends its own few requests: an answer its transport forbids then ends the case that
    drew it, which the engine reports as blocked by the transport's own row.
    """
    features = [f for f in FEATURES if ctx.revision in f.revisions and not ctx.identity.has(f.capability)]
    if not features:
        declared = [f.capability for f in FEATURES if ctx.revision in f.revisions]
        skip(f"the server declares every feature probed ({', '.join(declared)}): nothing is undeclared")
    probed = []
    for feature in features:
        call = await ctx.request(feature.method, feature.params)
        if call.reply.violation:
            unjudgeable(f"{feature.method} was answered as its transport forbids", **call.excerpt())
        probed.append((feature, call))
    return probed


@check("base.cap.undeclared-not-served", "BASE-CAP-001", "a feature served is declared")
async def undeclared_not_served(ctx: CaseContext) -> None:
    probed = await _undeclared(ctx)
    for feature, call in probed:
        if _served(feature, call):
            missed(
                f"{feature.method} served {feature.served_by} although the server did not declare the"
                f" {feature.capability!r} capability",
                **call.excerpt(),
            )
    ctx.note("undeclared and not served: " + ", ".join(f.capability for f, _ in probed))


@check("base.cap.undeclared-answers-32601", "BASE-CAP-002", "an undeclared feature answers -32601")
async def undeclared_method_not_found(ctx: CaseContext) -> None:
    probed = await _undeclared(ctx)
    for feature, call in probed:
        if call.error_code != jsonrpc.METHOD_NOT_FOUND:
            got = call.drew()
            missed(
                f"{feature.method} (capability {feature.capability!r} not declared) was answered with {got},"
                " not -32601",
                **call.excerpt(),
            )
    ctx.note("refused with -32601: " + ", ".join(f.method for f, _ in probed))


def _gate(method: str, capabilities: dict[str, Any], era: str) -> str | None:
    """Why a server notification needs a capability the server did not declare, or None.

    Only the lifecycle's sentence of the legacy revisions ("Only use capabilities that were successfully
    negotiated": SHOULD in 2024-11-05 and 2025-03-26, MUST after). A log message without the logging
    capability breaks the logging page's own MUST of every revision, which BASE-LOG-004 judges over the
    same wire log; 2026-07-28 keeps no other rule of the kind (its list_changed notifications go to
    listen streams, and no sentence there forbids one for a capability not declared).
    """

    def declared(name: str, sub: str | None = None) -> bool:
        value = capabilities.get(name)
        if not isinstance(value, dict):
            return False
        return sub is None or value.get(sub) is True

    if era == "modern":
        return None
    for kind in ("tools", "resources", "prompts"):
        if method == f"notifications/{kind}/list_changed" and not declared(kind, "listChanged"):
            return f"{kind}.listChanged"
    if method == "notifications/resources/updated" and not declared("resources", "subscribe"):
        return "resources.subscribe"
    return None


GATED = (
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/updated",
)


def _undeclared_gates(capabilities: dict[str, Any], era: str) -> list[str]:
    """The gated notifications this server leaves undeclared: the ones it must not send."""
    return [m for m in GATED if _gate(m, capabilities, era)]


@check(
    "base.cap.notifications-declared",
    "BASE-CAP-003",
    "notifications only for declared capabilities",
    eras=("legacy",),
    last=True,
)
async def notifications_declared(ctx: CaseContext) -> None:
    closed = _undeclared_gates(ctx.identity.capabilities, ctx.era)
    if not closed:
        skip("the server declares every capability a notification needs (listChanged, subscribe)")
    entries, seen = read_log(ctx)
    if not seen:
        skip("the server sent no JSON-RPC message in this revision's exchanges")
    for item in seen:
        if item.kind == "notification" and item.method in closed:
            needs = _gate(item.method or "", ctx.identity.capabilities, ctx.era)
            missed(
                f"message {item.entry}: {item.method} sent, but the server did not declare {needs}",
                **excerpt(entries, item),
            )
    notifications = sum(1 for s in seen if s.kind == "notification")
    ctx.note(
        f"{len(seen)} server messages ({notifications} notifications) read, none of "
        + ", ".join(closed)
        + " (their capabilities are not declared)"
    )


LISTS = (
    ("tools", "tools/list", "tools", "name"),
    ("resources", "resources/list", "resources", "uri"),
    ("resources", "resources/templates/list", "resourceTemplates", "uriTemplate"),
    ("prompts", "prompts/list", "prompts", "name"),
)


def _names(items: list[Any], key: str) -> list[str]:
    return sorted(str(i.get(key)) for i in items if isinstance(i, dict))


@check(
    "base.cap.lists-per-connection",
    "BASE-CAP-004",
    "lists do not vary by connection",
    eras=("modern",),
    fresh_sessions=1,
)
async def lists_per_connection(ctx: CaseContext) -> None:
    wanted = [entry for entry in LISTS if ctx.identity.has(entry[0])]
    if not wanted:
        skip("the server declares none of tools, resources and prompts")
    other = await ctx.fresh_session()
    compared = []
    try:
        for _, method, key, name in wanted:
            first = await ctx.list_all(method, key)
            if first.problem or any(c.result is None for c in first.calls):
                continue
            second = await ctx.list_on(other, method, key)
            if second.problem:
                continue
            mine, theirs = _names(first.items, name), _names(second.items, name)
            if mine != theirs:
                only_first = sorted(set(mine) - set(theirs))[:5]
                only_second = sorted(set(theirs) - set(mine))[:5]
                missed(
                    f"{method} differs on a second connection: only on the first {only_first},"
                    f" only on the second {only_second}",
                    **second.calls[-1].excerpt(),
                )
            compared.append(f"{method} ({len(mine)})")
    finally:
        await other.close()
    if not compared:
        skip("no complete listing to compare")
    ctx.note("the same on a second connection: " + ", ".join(compared))


@check(
    "base.cap.declared-lists-answered",
    "BASE-CAP-005",
    "a declared feature's list is answered",
    eras=("modern",),
)
async def declared_lists_answered(ctx: CaseContext) -> None:
    wanted = [e for e in LISTS if ctx.identity.has(e[0]) and e[1] != "resources/templates/list"]
    if not wanted:
        skip("the server declares none of tools, resources and prompts")
    for capability, method, key, _ in wanted:
        listing = await ctx.list_all(method, key)
        first = listing.calls[0] if listing.calls else None
        if first is None or not isinstance(first.result, dict):
            got = (
                "error " + repr(first.error_code)
                if first is not None and first.error is not None
                else "no result"
            )
            missed(
                f"the server declares {capability!r} but answered {method} with {got}",
                **(first.excerpt() if first else {}),
            )
    ctx.note("answered with a result: " + ", ".join(m for _, m, _, _ in wanted))
