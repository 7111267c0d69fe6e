"""Helpers shared by the base checks: complete listings, the sweep of tool calls, evidence scanning."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from conformance.pack_api import (
    FIRST_TOOL_ANNOTATIONS,
    Blocked,
    Call,
    CaseContext,
    Paced,
    Skipped,
    TransportTimeout,
    at_least,
    blocked,
    missed,
    paced,
    skip,
    weak,
)

T = TypeVar("T")

#: Stack-trace and source-path patterns (Python, Node, Java, PHP, Go, .NET) searched in error texts.
TRACE_PATTERNS = [
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r"File \"[^\"]+\", line \d+"),
    re.compile(r"^\s+at .+\(.+:\d+:\d+\)", re.M),
    re.compile(r"\bat [\w$.<>]+ \((?:/|[A-Za-z]:\\|node:)[^)]*:\d+:\d+\)"),
    re.compile(r"\.(?:py|js|mjs|ts|php|java|go|rb|cs):\d+"),
    re.compile(r"node_modules/"),
    re.compile(r"Exception in thread"),
    re.compile(r"#\d+ /.+\.php\(\d+\)"),
    re.compile(r"goroutine \d+ \["),
    re.compile(r"(?:^|[\s\"'(])/(?:home|usr|opt|var|srv|app|Users|root|tmp)/[\w.\-/]+\.\w{1,4}\b"),
]


#: Calls that may go unanswered within the timeout in one sweep over the tools (a slow tool breaks no
#: rule, so it is left unjudged) before the rest are left out too: bounds a run against slow servers.
SWEEP_TIMEOUTS = 2
#: The most seconds a sweep's call with sized arguments (`sized_first`) should take if every wait of
#: its schema is per step: the sweep only needs an answer, so a tool that sleeps is asked to sleep a
#: little, not its default (server-everything's long-running operation: 10 s, the whole timeout).
SWEEP_PACE_BUDGET = 2.0
#: The wait and the step count a sweep's call asks of a tool that sleeps: the least that is still an
#: ordinary call (a wait of 0 may mean "no limit" to some tools), since the sweep needs only its answer.
SWEEP_PACE = 0.1
SWEEP_STEPS = 1


def find_trace(text: str) -> str | None:
    for pattern in TRACE_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(0).strip()
    return None


async def tools(ctx: CaseContext, *, complete: bool = False, refetch: bool = False) -> list[dict[str, Any]]:
    """All tools (objects only); a broken listing is this check's precondition failing, so SKIP.

    `complete=True` is for checks about the listing as a whole (uniqueness, order): a listing that
    never ended may repeat pages, which would be misread as duplicate tools. `refetch=True` lists anew
    (and keeps the new listing), for the check that compares listings.
    """
    listing = await ctx.list_all("tools/list", "tools", refetch=refetch)
    items, problem = listing.items, listing.problem
    if problem and (complete or not items):
        skip(f"needs a complete tools/list: {problem}")
    return [t for t in items if isinstance(t, dict) and isinstance(t.get("name"), str)]


def skip_tools_held_back(ctx: CaseContext, reason: str, listed: list[dict[str, Any]] | None) -> NoReturn:
    """SKIP for want of a tool call: when the run's `--call-tools` policy held back some of `listed`
    (None: the tools are not at hand, so the policy may have), the kind is "needs-option" and the
    option that would call them `--call-tools all`, which every view counts; else nothing to judge."""
    policy_held_back = ctx.options.call_tools != "all" and (
        listed is None or len(ctx.callable_tools(listed)) < len(listed)
    )
    if policy_held_back:
        skip(reason, kind="needs-option", option="--call-tools all")
    skip(reason)


def no_callable_reason(ctx: CaseContext, listed: list[dict[str, Any]] | None = None) -> str:
    """Why the `--call-tools` policy lets no case call any of `listed` (the tools a check wanted to
    call; None when they are not at hand): named and counted where known, so the reason says what the
    server listed, not a guess (a server whose other tools are read-only is told which ones are not)."""
    if ctx.options.call_tools == "none":
        return "tool calls are disabled (--call-tools none)"
    if listed is not None and not listed:
        return "tools/list offers no tool"
    if not at_least(ctx.revision, FIRST_TOOL_ANNOTATIONS):
        return (
            f"{ctx.revision} has no tool annotations, so no tool is known to be read-only; "
            "pass --call-tools all to call every tool"
        )
    if listed is None:
        return "no tool is annotated readOnlyHint: true; pass --call-tools all to call every tool"
    names = ", ".join(repr(t.get("name")) for t in listed[:SHOWN_NAMES])
    more = f" and {len(listed) - SHOWN_NAMES} more" if len(listed) > SHOWN_NAMES else ""
    return (
        f"none of the {len(listed)} tool(s) ({names}{more}) is annotated readOnlyHint: true, which"
        " --call-tools safe (the default) requires; pass --call-tools all to call every tool"
    )


#: Tools named in a reason (the rest are counted).
SHOWN_NAMES = 5


@dataclass
class Sources:
    """What a check gathered from several sources, and why each source that gave nothing gave nothing.

    Why: a helper SKIPs when its own source has nothing (prompts/list offers no prompt, no tool may be
    called), which is right for a check that reads that source alone. A check that gathers from several
    (log messages drawn by tool calls and by prompts/get, say) must not end on one source's SKIP while
    another holds evidence: each source is taken through `take`, which keeps a helper's SKIP as that
    source's reason, and the case SKIPs only when no source gave anything (`require`), naming every
    reason; blocked by a case when a source was.
    """

    #: How many items each source that answered gave, by source.
    counts: dict[str, int] = field(default_factory=dict)
    #: Why each source that SKIPped gave nothing, by source.
    reasons: dict[str, str] = field(default_factory=dict)
    #: The check a blocked source named (the first), for a case that ends up with nothing.
    blocked_by: str | None = None

    async def take(self, source: str, gather: Awaitable[list[T]]) -> list[T]:
        """What `gather` gave; [] with its reason kept when it SKIPped."""
        try:
            got = await gather
        except Blocked as exc:
            self.blocked_by = self.blocked_by or exc.by
            self.reasons[source] = exc.message
            return []
        except Skipped as exc:
            self.reasons[source] = exc.message
            return []
        self.counts[source] = len(got)
        return got

    @property
    def gave(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        """Each source, with its count or its reason: `tools/call: 6; prompts/get: prompts/list ...`."""
        parts = [f"{source}: {count}" for source, count in self.counts.items()]
        parts += [f"{source}: {reason}" for source, reason in self.reasons.items()]
        return "; ".join(parts)

    def require(self, nothing: str) -> None:
        """SKIP (blocked when a source was) with `nothing` and every source's reason, unless some
        source gave something."""
        if self.gave:
            return
        reason = f"{nothing} ({self.line()})" if self.counts or self.reasons else nothing
        if self.blocked_by is not None:
            blocked(self.blocked_by, reason)
        skip(reason)


@dataclass
class ToolCalls:
    """One callable tool in the sweep: the arguments tried, the calls made, the one that succeeded."""

    tool: dict[str, Any]
    calls: list[tuple[dict[str, Any], Call]] = field(default_factory=list)
    success: Call | None = None
    #: Why the tool was not called, or not called to the end (no arguments, no answer in time).
    why: str = ""
    #: A call went unanswered within the timeout (it is not in `calls`, which holds answers).
    timed_out: bool = False
    #: The arguments of the call that went unanswered (a later call with the same ones would hang too).
    unanswered_arguments: dict[str, Any] | None = None
    #: The first call's arguments sized so the tool answers soon (`sized_first`), None when drawn as is.
    sized: Paced | None = None

    @property
    def name(self) -> str:
        return str(self.tool["name"])

    def arguments(self) -> dict[str, Any] | None:
        """The arguments of the successful call, if one succeeded."""
        return next((args for args, call in self.calls if call is self.success), None)

    def refusal(self) -> str:
        """What the last refused call said (its error message or isError text), cut short: the reader
        sees why the arguments did not fit (a path that is no repository, a zone the server lacks)."""
        if self.success is not None or not self.calls:
            return ""
        call = self.calls[-1][1]
        error, result = call.error, call.result
        if isinstance(error, dict):
            return str(error.get("message", ""))[:REFUSAL_SHOWN]
        content = result.get("content") if isinstance(result, dict) else None
        texts = [
            b["text"]
            for b in (content if isinstance(content, list) else [])
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        return " ".join(texts)[:REFUSAL_SHOWN]


@dataclass
class Sweep:
    """Every callable tool called with the careful candidates of its inputSchema, until one succeeds.

    A failure on arguments the schema allows is no fault of the server (a time zone the server does not
    know): no check reads it as one; it only means the checks that need a success have less to judge.
    """

    tools: list[ToolCalls]
    #: The tools listed, callable or not (what `why_nothing` counts when none may be called).
    listed: list[dict[str, Any]] = field(default_factory=list)

    def why_nothing(self, ctx: CaseContext) -> str:
        """Why no call succeeded: why no tool may be called, or the sweep's line (calls made, refused)."""
        return self.line() if self.tools else no_callable_reason(ctx, self.listed)

    def successes(self) -> list[tuple[dict[str, Any], Call]]:
        return [(t.tool, t.success) for t in self.tools if t.success is not None]

    def answered(self) -> int:
        return sum(len(t.calls) for t in self.tools)

    def made(self) -> int:
        """Calls sent: the answered ones and those left unanswered within the timeout."""
        return self.answered() + sum(1 for t in self.tools if t.timed_out)

    def unanswered(self) -> list[str]:
        return [f"{t.name!r} ({t.why})" for t in self.tools if t.success is None and t.why]

    def summary(self, feeds: tuple[str, ...]) -> dict[str, Any]:
        """The case evidence: how many calls were made and succeeded, per tool, and what it fed."""
        return {
            "tools_called": sum(1 for t in self.tools if t.calls or t.timed_out),
            "calls": self.made(),
            "calls_answered": self.answered(),
            "calls_succeeded": len(self.successes()),
            "feeds": list(feeds),
            "per_tool": [
                {
                    "tool": t.name,
                    "calls": len(t.calls) + t.timed_out,
                    "succeeded": t.success is not None,
                    **({"arguments": t.arguments()} if t.success is not None else {}),
                    **({"sized": t.sized.line()} if t.sized is not None else {}),
                    **({"why": t.why} if t.why else {}),
                    **({"refusal": t.refusal()} if t.refusal() else {}),
                }
                for t in self.tools[:SWEEP_LISTED]
            ],
        }

    def line(self) -> str:
        """One line for the case message: calls made, calls that succeeded, and which tools."""
        succeeded = [t.name for t in self.tools if t.success is not None]
        text = (
            f"tools/call: {len(succeeded)} of {len(self.tools)} callable tool(s) succeeded in "
            f"{self.made()} call(s) with arguments built from their inputSchema"
        )
        if succeeded:
            text += " (" + ", ".join(succeeded[:SWEEP_LISTED]) + ")"
        refused = [t.name for t in self.tools if t.calls and t.success is None]
        if refused:
            text += "; refused every candidate, not held against the server: " + ", ".join(refused[:10])
        return text


#: Tools listed by name in a sweep's evidence (a server may offer hundreds).
SWEEP_LISTED = 50
#: Characters of a refusal's text kept in the evidence.
REFUSAL_SHOWN = 160


async def call_sweep(ctx: CaseContext) -> Sweep:
    """Call each callable tool once per (target, revision) with up to CANDIDATES arguments.

    A tool that does not answer within the timeout is not judged, and the others still are: a slow
    tool (server-everything has one that sleeps 10 s) breaks no rule, and must not turn every
    structured-output verdict into an ERROR. After SWEEP_TIMEOUTS of them the remaining tools are not
    called. Any other transport failure stops the sweep (memo remembers it for every later check).
    """

    async def sweep() -> Sweep:
        # hypothesis is imported only when a tool is to be called: a run that calls none stays light.
        from conformance.pack_api import drawing

        listed = await tools(ctx)
        chosen = ctx.callable_tools(listed)
        drawings = [drawing(t.get("inputSchema", {})) for t in chosen]
        # Each tool's first candidate up front, in a thread; a later one only if the first is refused.
        firsts = await asyncio.to_thread(lambda: [d.get(0) for d in drawings])
        out, timeouts = [], 0
        for tool, drawn, first in zip(chosen, drawings, firsts, strict=True):
            entry = ToolCalls(tool)
            out.append(entry)
            if timeouts >= SWEEP_TIMEOUTS:
                entry.why = "not called"
                continue
            if tasks_required(ctx, tool):
                entry.why = (
                    'not called: its execution.taskSupport is "required" (a client MUST call it as a task)'
                )
                continue
            if first is None:
                entry.why = f"not called: {drawn.problem}"
                continue
            entry.sized = sized_first(tool, first)
            # The sized arguments first, when the schema says how long the tool works; then the drawn
            # candidates in order (the first again only when sizing changed it and was refused).
            rank = 0 if entry.sized is not None else 1
            args: dict[str, Any] = entry.sized.arguments if entry.sized is not None else json.loads(first)
            while True:
                args = json.loads(json.dumps(args))  # a fresh copy: a check may change the arguments it sends
                try:
                    call = await ctx.request("tools/call", {"name": tool["name"], "arguments": args})
                except TransportTimeout:
                    timeouts += 1
                    entry.timed_out = True
                    entry.unanswered_arguments = args
                    entry.why = f"no answer within {ctx.options.timeout:g} s"
                    break
                entry.calls.append((args, call))
                if succeeded(call) is not None:
                    entry.success = call
                    break
                text = drawn.get(rank) if drawn.ready(rank) else await asyncio.to_thread(drawn.get, rank)
                if text is None:
                    break
                args, rank = json.loads(text), rank + 1
        return Sweep(out, listed)

    return await ctx.remember_once("tool-sweep", "calling each callable tool", sweep)


def sized_first(tool: dict[str, Any], first: str | None) -> Paced | None:
    """The first candidate (JSON text) of `tool` with its step counts and waits sized
    (`conformance.arguments.pacing`), so that a tool that sleeps answers within SWEEP_PACE_BUDGET
    seconds instead of its default; None when its schema has nothing to size or sizing would not fit.

    Why: a call made for its answer alone (the sweep, the input sweep) should cost what it must show,
    not the tool's own default wait, which may outlast the timeout in every revision."""
    if first is None:
        return None
    base = json.loads(first)
    if not isinstance(base, dict):
        return None
    schema = tool.get("inputSchema", {})
    return paced(schema, base, budget=SWEEP_PACE_BUDGET, count=SWEEP_STEPS, pace=SWEEP_PACE, waits_only=True)


async def answered_calls(ctx: CaseContext) -> list[Call]:
    """Every answered call of the tool sweep, refused ones included; SKIP saying why when there is none
    (for `Sources.take`, where that SKIP is one source's reason)."""
    sweep = await call_sweep(ctx)
    calls = [call for entry in sweep.tools for _, call in entry.calls]
    if not calls:
        skip(sweep.why_nothing(ctx))
    return calls


def declares_tasks(ctx: CaseContext, *path: str) -> bool:
    """The server's `capabilities.tasks` (2025-11-25) is an object with `path` in it, an object too
    (`declares_tasks(ctx)`: tasks at all; `("requests", "tools", "call")`: task-augmented tools/call)."""
    node: Any = ctx.identity.capabilities.get("tasks")
    for key in path:
        if not isinstance(node, dict):
            return False
        node = node.get(key)
    return isinstance(node, dict)


def task_support(tool: dict[str, Any]) -> str:
    """A tool's execution.taskSupport, "forbidden" when absent (the 2025-11-25 page's default)."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) else "forbidden"


def tasks_required(ctx: CaseContext, tool: dict[str, Any]) -> bool:
    """The tool must be called as a task (2025-11-25 Tool-Level Negotiation 2.3: its
    execution.taskSupport is "required" and the server takes task-augmented tools/call), so a plain
    call of it is not the client's to make."""
    return task_support(tool) == "required" and declares_tasks(ctx, "requests", "tools", "call")


def succeeded(call: Call) -> dict[str, Any] | None:
    """The result of a call that succeeded (a result object without isError: true), else None."""
    result = call.result
    if isinstance(result, dict) and result.get("isError") is not True:
        return result
    return None


def json_text_blocks(result: dict[str, Any]) -> list[Any]:
    """Parsed values of the text blocks of a tool result that hold a JSON object."""
    values = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                value = json.loads(block["text"])
            except ValueError:
                continue
            if isinstance(value, dict):
                values.append(value)
    return values


#: The 2026-07-28 row that a declared capability's list method is answered (BASE-CAP-005).
DECLARED_LISTS_CHECK = "base.cap.declared-lists-answered"


def expect_declared_result(call: Call, what: str, declared: str) -> None:
    """`call`, of a method the server declares (`declared` names the capability), answered with a result
    object. An error answer is judged as an error, never as a missing result: the server declared the
    method and then refused it, which no sentence forbids, so WARN saying which error; an answer that is
    neither a result nor an error is the row's miss."""
    if call.error is not None and not isinstance(call.result, dict):
        weak(
            f"{what} was refused with {call.drew()} although the server declares {declared} (no sentence "
            "requires a declared method to succeed)",
            **call.excerpt(),
        )
    if not isinstance(call.result, dict):
        missed(f"{what} was not answered with a result object", **call.excerpt())


async def judge_pages(ctx: CaseContext, method: str, key: str, shape: Callable[[Any], list[str]]) -> None:
    """A declared capability's list method: every page of the engine's one listing validated by `shape`.

    An error answer is judged as an error, never validated as a result. 2026-07-28 requires a declared
    capability's list method to be answered with the list ("MUST respond to tools/list requests with
    the set of tools"), which BASE-CAP-005 judges: a first page refused there is SKIP, blocked by it.
    No sentence before it does, so a page refused with a JSON-RPC error is WARN (weak: the server
    declared what it then refused), saying which error. A page off the shape, or an answer that is
    neither a result nor an error, is the row's miss; a listing that does not end is the pagination
    rows' (BASE-TOOLS-006, BASE-PAGE-001).
    """
    paged = await ctx.list_all(method, key)
    for index, call in enumerate(paged.calls):
        if call is paged.refusal and index == 0 and ctx.era == "modern":
            blocked(DECLARED_LISTS_CHECK, f"{method} was refused with {call.drew()}")
        if call is paged.refusal:
            weak(
                f"page {index + 1} of {method} was refused with {call.drew()}: no result to validate "
                "(no sentence of this revision requires a declared capability's list method to succeed)",
                **call.excerpt(),
            )
        problems = shape(call.result)
        if problems:
            missed(f"page {index + 1}: " + "; ".join(problems), **call.excerpt())
    if not paged.calls:
        missed(paged.problem or f"{method} was not sent")


async def refused_listing(ctx: CaseContext, method: str, key: str, shape_check: str) -> None:
    """The pagination rows' precondition: a listing refused on its first page has no pages to follow,
    so the case is SKIP, blocked by the list method's shape row (`shape_check`), which judges the
    refusal; a refusal of the server's own later cursor is a pagination fault, left to the caller."""
    paged = await ctx.list_all(method, key)
    refusal = paged.refusal
    if refusal is not None and refusal is paged.calls[0]:
        blocked(shape_check, f"{method} was refused with {refusal.drew()}: no pages to follow")


def error_texts(call: Call) -> list[str]:
    """The error a call drew, as JSON text: its JSON-RPC error and an `isError` result (where a stack
    trace or a file path would leak)."""
    texts = []
    if call.error is not None:
        texts.append(json.dumps(call.error, ensure_ascii=False))
    result = call.result
    if isinstance(result, dict) and result.get("isError") is True:
        texts.append(json.dumps(result, ensure_ascii=False))
    return texts
