"""Helpers shared by the base checks: complete listings, example inputs, evidence scanning."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar, cast

from conformance.adapters.base import TransportError
from conformance.engine.checks import missed, skip
from conformance.engine.context import CaseContext
from conformance.protocol.session import Call
from conformance.protocol.versions import FIRST_TOOL_ANNOTATIONS, at_least

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


class Failed:
    """A shared exchange that broke the transport; later checks that need it are ERROR at once."""

    def __init__(self, owner: str, error: TransportError) -> None:
        self.owner, self.error = owner, error

    def reraise(self) -> NoReturn:
        raise type(self.error)(
            f"needs an exchange that already failed ({self.owner}): {self.error}",
            evidence=self.error.evidence,
        )


#: Calls that may go unanswered within the timeout in one sweep over the tools (a slow tool breaks no
#: rule, so it is left unjudged) before the rest are left out too: bounds a run against slow servers.
SWEEP_TIMEOUTS = 2


async def memo(ctx: CaseContext, key: str, owner: str, factory: Callable[[], Awaitable[T]]) -> T:
    """Compute a fact once per (target, revision); remember a transport failure as well as a value.

    Without this, every check that needs the same hanging call would wait out its own timeout.
    """
    if key in ctx.shared:
        value = ctx.shared[key]
        if isinstance(value, Failed):
            value.reraise()
        return cast(T, value)
    try:
        result = await factory()
    except TransportError as exc:
        ctx.shared[key] = Failed(owner, exc)
        raise
    ctx.shared[key] = result
    return result


def find_trace(text: str) -> str | None:
    for pattern in TRACE_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(0).strip()
    return None


async def list_all(ctx: CaseContext, method: str, key: str) -> tuple[list[Any], list[Call], str]:
    """Follow nextCursor to the end (capped, cycle-checked); cached per (target, revision)."""
    cache_key = f"list:{method}"
    if cache_key in ctx.shared:
        cached = ctx.shared[cache_key]
        if isinstance(cached, Failed):
            cached.reraise()
        items, calls, problem, entries = cached
        ctx.attach(entries)
    else:
        mark = ctx.pool.transcript.mark()
        items, calls, problem = [], [], ""
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(ctx.options.list_page_cap):
            try:
                call = await ctx.request(method, {"cursor": cursor} if cursor is not None else None)
            except TransportError as exc:
                ctx.shared[cache_key] = Failed(f"{method} page {len(calls) + 1}", exc)
                raise
            calls.append(call)
            result = call.result
            if not isinstance(result, dict):
                problem = f"{method} was not answered with a result"
                break
            page = result.get(key)
            if isinstance(page, list):
                items.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            if not isinstance(cursor, str) or cursor in seen:
                problem = f"nextCursor {cursor!r} repeats or is not a string: the listing never ends"
                break
            seen.add(cursor)
        else:
            problem = f"more than {ctx.options.list_page_cap} pages: the listing does not end"
        ctx.shared[cache_key] = (items, calls, problem, ctx.pool.transcript.since(mark))
    return items, calls, problem


async def tools(ctx: CaseContext, *, complete: bool = False) -> list[dict[str, Any]]:
    """All tools (objects only); a broken listing is this check's precondition failing, so SKIP.

    `complete=True` is for checks about the listing as a whole (uniqueness, order): a listing that
    never ended may repeat pages, which would be misread as duplicate tools.
    """
    items, _, problem = await list_all(ctx, "tools/list", "tools")
    if problem and (complete or not items):
        skip(f"needs a complete tools/list: {problem}")
    return [t for t in items if isinstance(t, dict) and isinstance(t.get("name"), str)]


def callable_tools(ctx: CaseContext, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    policy = ctx.options.call_tools
    if policy == "none":
        return []
    if policy == "all":
        return listed
    return [
        t
        for t in listed
        if isinstance(t.get("annotations"), dict) and t["annotations"].get("readOnlyHint") is True
    ]


def no_callable_reason(ctx: CaseContext) -> str:
    if ctx.options.call_tools == "none":
        return "tool calls are disabled (--call-tools none)"
    if not at_least(ctx.revision, FIRST_TOOL_ANNOTATIONS):
        return (
            f"{ctx.revision} has no tool annotations, so no tool is known to be read-only; "
            "pass --call-tools all to call every tool"
        )
    return "no tool is annotated readOnlyHint: true; pass --call-tools all to call every tool"


def example_value(schema: Any, depth: int = 0) -> Any:
    """A small value valid for common schemas: what a careful client would send to a read-only tool."""
    if not isinstance(schema, dict) or depth > 6:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list) and schema[combinator]:
            return example_value(schema[combinator][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or "properties" in schema:
        props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        return {name: example_value(props.get(name, {}), depth + 1) for name in required}
    if kind == "array":
        count = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        return [example_value(schema.get("items", {}), depth + 1) for _ in range(count)]
    if kind == "integer":
        return (
            max(int(schema.get("minimum", 1)), 1) if isinstance(schema.get("minimum", 1), int | float) else 1
        )
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "string":
        if schema.get("format") == "uri":
            return "https://example.com/"
        if schema.get("format") == "date-time":
            return "2026-01-01T00:00:00Z"
        return "x" * max(int(schema.get("minLength", 1) or 1), 1)
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


def expect_result(call: Call, what: str) -> dict[str, Any]:
    result = call.result
    if not isinstance(result, dict):
        missed(f"{what} was not answered with a result object", **call.excerpt())
    return result
