"""Logging checks: legacy `logging/setLevel`, the logging capability, and 2026-07-28's per-request opt-in.

Log messages are drawn by what the server does anyway: the sweep of callable tools (`call_sweep`) and
the prompts got. A server that logs on none of it leaves the rows about its messages SKIP.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import MODERN_REVISIONS, Call, CaseContext, check, jsonrpc, missed, skip
from conformance_packs.base.common import Sources, answered_calls, call_sweep, expect_declared_result
from conformance_packs.base.prompting import LOG_LEVELS, level_of, log_messages, prompt_gets
from conformance_packs.base.wirelog import drawn_by, excerpt, read_log

META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
INVALID_LEVEL = "verbose"
#: The logLevel the 2026-07-28 checks ask for: debug, info and notice lie below it.
OPT_IN_LEVEL = "warning"


async def _prompt_calls(ctx: CaseContext) -> list[Call]:
    return [g.call for g in await prompt_gets(ctx)]


async def observed_calls(ctx: CaseContext) -> tuple[list[Call], Sources]:
    """Every answered call of the tool sweep, and the prompts/get calls when prompts are offered, each
    source taken apart (`Sources`): a server that declares prompts and lists none (mcp 2.x declares
    prompts by default) is still judged on its tool calls."""
    sources = Sources()
    calls = await sources.take("tools/call", answered_calls(ctx))
    if ctx.identity.has("prompts"):
        calls += await sources.take("prompts/get", _prompt_calls(ctx))
    return calls, sources


@dataclass
class LevelProbe:
    """`logging/setLevel` to `level`, then the sweep's successful tool calls again."""

    level: str
    seen_before: list[str]
    set_call: Call
    calls: list[Call] = field(default_factory=list)


def _level_to_set(seen: list[str]) -> str | None:
    """The highest level seen when several were, else the level above the one seen: either way some
    message seen before must now be held back."""
    ranks = sorted({LOG_LEVELS.index(level) for level in seen})
    if len(ranks) > 1:
        return LOG_LEVELS[ranks[-1]]
    if ranks and ranks[0] + 1 < len(LOG_LEVELS):
        return LOG_LEVELS[ranks[0] + 1]
    return None


async def level_probe(ctx: CaseContext) -> LevelProbe:
    """Once per (target, revision), on the shared session (a session of its own would cost a server
    start per revision): the level is set back to debug afterwards, so later requests may draw every
    message again, as before any level was set."""

    async def probe() -> LevelProbe:
        sweep = await call_sweep(ctx)
        seen = [
            lvl
            for entry in sweep.tools
            for _, call in entry.calls
            for m in log_messages(call)
            if (lvl := level_of(m))
        ]
        level = _level_to_set(seen) or "error"
        result = LevelProbe(level, seen, await ctx.request("logging/setLevel", {"level": level}))
        try:
            for entry in sweep.tools:
                if entry.success is not None:
                    params = {"name": entry.name, "arguments": entry.arguments() or {}}
                    result.calls.append(await ctx.request("tools/call", params))
        finally:
            await ctx.request("logging/setLevel", {"level": "debug"})
        return result

    return await ctx.remember_once("log-level-probe", "setting a log level", probe)


async def opted_in_calls(ctx: CaseContext) -> list[Call]:
    """2026-07-28: the sweep's successful tool calls (at most 5) again, with `_meta` logLevel
    OPT_IN_LEVEL; once per (target, revision)."""

    async def call() -> list[Call]:
        sweep = await call_sweep(ctx)
        calls = []
        for entry in [t for t in sweep.tools if t.success is not None][:5]:
            params = {
                "name": entry.name,
                "arguments": entry.arguments() or {},
                "_meta": {META_LOG_LEVEL: OPT_IN_LEVEL},
            }
            calls.append(await ctx.request("tools/call", params))
        return calls

    return await ctx.remember_once("log-opted-in", "calling tools with a logLevel", call)


@check(
    "base.logging.set-level",
    "BASE-LOG-001",
    "logging/setLevel is answered with an empty result",
    eras=("legacy",),
    capability="logging",
)
async def set_level(ctx: CaseContext) -> None:
    probe = await level_probe(ctx)
    ctx.note(f"logging/setLevel {probe.level!r}")
    expect_declared_result(probe.set_call, f"logging/setLevel {probe.level!r}", "logging")


@check(
    "base.logging.invalid-level",
    "BASE-LOG-002",
    "logging/setLevel with an unknown level is -32602",
    eras=("legacy",),
    capability="logging",
)
async def invalid_level(ctx: CaseContext) -> None:
    call = await ctx.request("logging/setLevel", {"level": INVALID_LEVEL})
    if call.error is None:
        missed(f"logging/setLevel {INVALID_LEVEL!r}, no MCP log level, was not refused", **call.excerpt())
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(f"an invalid log level drew {call.drew()}, not -32602", **call.excerpt())


@check(
    "base.logging.below-level",
    "BASE-LOG-003",
    "no log message below the level set",
    eras=("legacy",),
    capability="logging",
)
async def below_level(ctx: CaseContext) -> None:
    sweep = await call_sweep(ctx)
    if not sweep.successes():
        skip("no tool call succeeded, so no log message could be drawn: " + sweep.why_nothing(ctx))
    probe = await level_probe(ctx)
    if not probe.seen_before:
        skip("no tool call drew a log message (notifications/message), so none can be held back")
    if not isinstance(probe.set_call.result, dict):
        skip("logging/setLevel was not answered with a result (BASE-LOG-001 judges it)")
    floor = LOG_LEVELS.index(probe.level)
    ctx.note(
        f"seen before: {', '.join(sorted(set(probe.seen_before)))}; then logging/setLevel {probe.level!r}"
    )
    for call in probe.calls:
        for message in log_messages(call):
            level = level_of(message)
            if level is not None and LOG_LEVELS.index(level) < floor:
                missed(
                    f"a {level!r} log message came after logging/setLevel {probe.level!r}",
                    log_message=str(message)[:500],
                    **call.excerpt(),
                )


@check(
    "base.logging.capability-declared",
    "BASE-LOG-004",
    "a server that logs declares the logging capability",
)
async def capability_declared(ctx: CaseContext) -> None:
    # A log message any earlier case drew counts too, not only the ones drawn here: the revision's wire
    # log so far is read (not the last checks' way: this one sends the opted-in calls of 2026-07-28).
    calls, sources = await observed_calls(ctx)
    if ctx.era == "modern":
        calls += await sources.take(f"tools/call with logLevel {OPT_IN_LEVEL!r}", opted_in_calls(ctx))
    entries, seen = read_log(ctx)
    anywhere = [
        item for item in seen if item.kind == "notification" and item.method == "notifications/message"
    ]
    logged = [(call, m) for call in calls for m in log_messages(call)]
    if not logged and not anywhere:
        sources.require("no request was made that could draw a log message")
        skip(f"no log message (notifications/message) in this revision's exchanges: {sources.line()}")
    if not ctx.identity.has("logging"):
        if anywhere:
            missed(
                f"message {anywhere[0].entry}: notifications/message sent, but the logging capability is"
                " not declared",
                **excerpt(entries, anywhere[0]),
                **drawn_by(ctx, entries, anywhere[0].entry),
            )
        call, message = logged[0]
        missed(
            "notifications/message sent, but the logging capability is not declared",
            log_message=json.dumps(message, ensure_ascii=False)[:500],
            **call.excerpt(),
        )
    ctx.note(
        f"{max(len(logged), len(anywhere))} log message(s) seen ({sources.line()} and the revision's wire"
        " log), the logging capability declared"
    )


@check(
    "base.logging.modern-opt-in",
    "BASE-LOG-005",
    "no log message for a request without a logLevel",
    revisions=MODERN_REVISIONS,
)
async def modern_opt_in(ctx: CaseContext) -> None:
    calls, sources = await observed_calls(ctx)
    sources.require("no tool was called and no prompt got, so no request could draw a log message")
    for call in calls:
        messages = log_messages(call)
        if messages:
            missed(
                "notifications/message sent for a request whose _meta has no logLevel",
                log_message=json.dumps(messages[0], ensure_ascii=False)[:500],
                **call.excerpt(),
            )
    ctx.note(f"{len(calls)} request(s) without {META_LOG_LEVEL} drew no log message ({sources.line()})")


async def _cheap_request(ctx: CaseContext, meta: dict[str, Any]) -> Call:
    for capability, method in (
        ("tools", "tools/list"),
        ("prompts", "prompts/list"),
        ("resources", "resources/list"),
    ):
        if ctx.identity.has(capability):
            return await ctx.request(method, {"_meta": meta})
    skip("the server offers no tools, prompts or resources to list")


@check(
    "base.logging.modern-invalid-level",
    "BASE-LOG-006",
    "a request with an unknown logLevel is -32602",
    revisions=MODERN_REVISIONS,
    capability="logging",
)
async def modern_invalid_level(ctx: CaseContext) -> None:
    call = await _cheap_request(ctx, {META_LOG_LEVEL: INVALID_LEVEL})
    if call.error is None:
        missed(
            f"a request with logLevel {INVALID_LEVEL!r}, no MCP log level, was not refused", **call.excerpt()
        )
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(f"an invalid logLevel drew {call.drew()}, not -32602", **call.excerpt())


@check(
    "base.logging.modern-at-or-above",
    "BASE-LOG-007",
    "log messages only at or above the requested logLevel",
    revisions=MODERN_REVISIONS,
    capability="logging",
)
async def modern_at_or_above(ctx: CaseContext) -> None:
    calls = await opted_in_calls(ctx)
    if not calls:
        skip("no tool call succeeded to repeat with a logLevel: " + (await call_sweep(ctx)).why_nothing(ctx))
    floor, seen = LOG_LEVELS.index(OPT_IN_LEVEL), 0
    for call in calls:
        for message in log_messages(call):
            seen += 1
            level = level_of(message)
            if level is not None and LOG_LEVELS.index(level) < floor:
                missed(
                    f"a {level!r} log message for a request with logLevel {OPT_IN_LEVEL!r}", **call.excerpt()
                )
    if not seen:
        skip(f"no tool call with logLevel {OPT_IN_LEVEL!r} drew a log message")
    ctx.note(f"{seen} log message(s), all at or above {OPT_IN_LEVEL!r}")
