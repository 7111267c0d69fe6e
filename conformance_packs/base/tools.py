"""tools/list and tools/call checks."""

from __future__ import annotations

import copy
import functools
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, NoReturn

from jsonschema import validators

from conformance.pack_api import (
    FIRST_DEFAULT_DIALECT,
    FIRST_STRUCTURED_OUTPUT,
    FIRST_TOOL_NAME_RULES,
    CaseContext,
    EcmaDraft202012Validator,
    at_least,
    blocked,
    check,
    jsonrpc,
    meta,
    missed,
    shape_errors,
    since,
    skip,
    weak,
)
from conformance_packs.base.common import (
    call_sweep,
    json_text_blocks,
    judge_pages,
    no_callable_reason,
    refused_listing,
    skip_tools_held_back,
    succeeded,
    tools,
)

NAME_RULE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


@check("base.tools.list-shape", "BASE-TOOLS-001", "tools/list result shape", capability="tools")
async def list_shape(ctx: CaseContext) -> None:
    await judge_pages(
        ctx, "tools/list", "tools", lambda result: shape_errors("listToolsResult", result, ctx.revision)
    )


@check("base.tools.pagination-ends", "BASE-TOOLS-006", "pagination ends", capability="tools")
async def pagination_ends(ctx: CaseContext) -> None:
    await refused_listing(ctx, "tools/list", "tools", "base.tools.list-shape")
    paged = await ctx.list_all("tools/list", "tools")
    items, calls, problem = paged.items, paged.calls, paged.problem
    if problem:
        missed(problem, **(calls[-1].excerpt() if calls else {}))
    ctx.note(f"{len(items)} tools in {len(calls)} page(s)")


@check(
    "base.tools.name-rules",
    "BASE-TOOLS-002",
    "tool names follow the naming rules",
    capability="tools",
    revisions=since(FIRST_TOOL_NAME_RULES),
)
async def name_rules(ctx: CaseContext) -> None:
    bad = [t["name"] for t in await tools(ctx) if not NAME_RULE.match(t["name"])]
    if bad:
        missed(f"names outside ^[A-Za-z0-9_.-]{{1,128}}$: {bad[:10]!r}")


@check("base.tools.unique-names", "BASE-TOOLS-003", "tool names are unique", capability="tools")
async def unique_names(ctx: CaseContext) -> None:
    counts = Counter(t["name"] for t in await tools(ctx, complete=True))
    dupes = sorted(name for name, n in counts.items() if n > 1)
    if dupes:
        missed(f"names listed more than once: {dupes[:10]!r}")


@dataclass(frozen=True)
class SchemaProblems:
    """What is wrong with one tool schema: `error` breaks the MUST, `patterns` only a SHOULD."""

    error: str | None = None
    patterns: tuple[str, ...] = ()


def _schema_problems(schema: Any, revision: str) -> SchemaProblems:
    """Servers often repeat schemas (every tool with `{"type": "object"}`), so judgements are cached.

    2025-11-25 made 2020-12 the dialect of a schema without `$schema`; earlier revisions name none (and
    publish their own schema in draft-07), so there such a schema passes if either dialect accepts it.
    """
    judged = _schema_problems_in(schema, DEFAULT_DIALECT)
    undeclared = isinstance(schema, dict) and "$schema" not in schema
    if judged.error and undeclared and not at_least(revision, FIRST_DEFAULT_DIALECT):
        older = _schema_problems_in(schema, DRAFT_07)
        if older.error is None:
            return older
    return judged


def _schema_problems_in(schema: Any, default_dialect: str) -> SchemaProblems:
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _schema_problems_uncached(schema, default_dialect)
    return _cached_schema_problems(key, default_dialect)


@functools.lru_cache(maxsize=4096)
def _cached_schema_problems(key: str, default_dialect: str) -> SchemaProblems:
    return _schema_problems_uncached(json.loads(key), default_dialect)


def _schema_problems_uncached(schema: Any, default_dialect: str) -> SchemaProblems:
    if not isinstance(schema, dict):
        return SchemaProblems(f"is a {type(schema).__name__}, not an object")
    if schema.get("type") != "object":
        return SchemaProblems(f'root type is {schema.get("type")!r}, not "object"')
    dialect = schema.get("$schema", default_dialect)
    cls = validators.validator_for({"$schema": dialect}, default=None) if isinstance(dialect, str) else None
    if cls is None:
        return SchemaProblems(f"declares an unknown dialect {dialect!r}")
    judged = meta.judge(cls, schema)
    error = judged.error
    return SchemaProblems(
        f"is not a valid JSON Schema at {meta.where(error)}: {error.message[:200]}" if error else None,
        tuple(f"{meta.where(e)}: {e.instance!r}"[:200] for e in judged.bad_patterns),
    )


def _judge_schemas(key: str, tools_listed: list[dict[str, Any]], revision: str) -> None:
    """FAIL on the first schema that is no JSON Schema; else WARN on patterns that are no regex."""
    patterns: list[str] = []
    for tool in tools_listed:
        problems = _schema_problems(tool.get(key), revision)
        if problems.error:
            missed(f"tool {tool['name']!r}: {key} {problems.error}")
        patterns.extend(f"tool {tool['name']!r} {key} at {p}" for p in problems.patterns)
    if patterns:
        weak(meta.bad_patterns_message(patterns))


@check(
    "base.tools.input-schema-valid",
    "BASE-TOOLS-004",
    "inputSchema is a valid JSON Schema",
    capability="tools",
)
async def input_schema_valid(ctx: CaseContext) -> None:
    _judge_schemas("inputSchema", await tools(ctx), ctx.revision)


@check(
    "base.tools.output-schema-valid",
    "BASE-TOOLS-005",
    "outputSchema is a valid JSON Schema",
    capability="tools",
    revisions=since(FIRST_STRUCTURED_OUTPUT),
)
async def output_schema_valid(ctx: CaseContext) -> None:
    declared = [t for t in await tools(ctx) if "outputSchema" in t]
    if not declared:
        skip("no tool declares an outputSchema: nothing to judge")  # never a PASS on nothing
    _judge_schemas("outputSchema", declared, ctx.revision)


#: How many listings BASE-TOOLS-007 compares: the official check `tools-list-deterministic-order` makes
#: three `tools/list` calls, and an order that changes only now and then shows in three, not always in two.
LISTINGS = 3


@check("base.tools.deterministic-order", "BASE-TOOLS-007", "listing is deterministic", capability="tools")
async def deterministic_order(ctx: CaseContext) -> None:
    first = [t["name"] for t in await tools(ctx, complete=True)]
    later = [[t["name"] for t in await tools(ctx, complete=True, refetch=True)] for _ in range(LISTINGS - 1)]
    if all(len(names) < 2 for names in [first, *later]):
        skip(
            f"fewer than two tools in each of {LISTINGS} listings: no order to compare"
        )  # never a PASS on nothing
    for number, names in enumerate(later, start=2):
        if names != first:
            missed(f"listing {number} of {LISTINGS} differs from the first: {first[:8]!r}… vs {names[:8]!r}…")
    ctx.note(f"{LISTINGS} listings of {len(first)} tools, the same names in the same order")


#: The requirements the sweep of tool calls feeds (named in each one's evidence).
SWEEP_FEEDS = ("BASE-CALL-001", "BASE-CALL-002", "BASE-CALL-003", "BASE-CALL-006")


async def _successful_structured_calls(ctx: CaseContext) -> list[tuple[dict[str, Any], Any]]:
    """(tool, call) for each callable tool that a call with careful arguments succeeded on.

    The sweep (common.call_sweep) is shared by the (target, revision); this case's evidence says how
    many calls were made and succeeded, which tools were left unjudged, and which checks it fed. A
    tool that does not answer within the timeout is not judged, and the others still are (no rule
    bounds a tool's time); when no tool answered at all, nothing was judged: SKIP with that reason,
    never PASS.
    """
    sweep = await call_sweep(ctx)
    ctx.facts["tool_calls"] = sweep.summary(SWEEP_FEEDS)
    if not sweep.tools:
        skip(sweep.why_nothing(ctx))
    ctx.note(sweep.line())
    unanswered = sweep.unanswered()
    if not sweep.answered() and any(t.why.startswith("no answer") for t in sweep.tools):
        # Nothing answered, so nothing was judged: never a PASS, and no rule bounds a tool's time.
        skip("nothing judged: no called tool answered within the timeout: " + ", ".join(unanswered))
    if unanswered:
        ctx.note("not judged: " + ", ".join(unanswered))
    return sweep.successes()


def _judged_on(ctx: CaseContext, names: list[str]) -> None:
    """Say which successful calls this check judged (the sweep's line says how many were made)."""
    if names:
        ctx.note(f"judged on {len(names)} successful call(s): " + ", ".join(dict.fromkeys(names)))


async def _skip_unjudged(ctx: CaseContext, reason: str) -> NoReturn:
    """SKIP, with the sweep's count of calls in the reason: "3 calls, none succeeded" says why; needing
    `--call-tools all` when the run's policy held back a listed tool."""
    line = next((n for n in ctx.notes if n.startswith("tools/call:")), "")
    skip_tools_held_back(ctx, f"{reason} ({line})" if line else reason, await tools(ctx))


@check(
    "base.call.structured-matches-schema",
    "BASE-CALL-001",
    "structuredContent conforms to outputSchema",
    capability="tools",
    revisions=since(FIRST_STRUCTURED_OUTPUT),
)
async def structured_matches_schema(ctx: CaseContext) -> None:
    judged: list[str] = []
    unrunnable: list[str] = []
    for tool, call in await _successful_structured_calls(ctx):
        result = succeeded(call)
        schema = tool.get("outputSchema")
        if result is None or not isinstance(schema, dict):
            continue
        if "structuredContent" not in result:
            missed(
                f"tool {tool['name']!r} declares outputSchema but returned no structuredContent",
                **call.excerpt(),
            )
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        if cls is validators.Draft202012Validator:
            cls = EcmaDraft202012Validator  # `pattern` with ECMA-262's `$`, as JSON Schema means it
        try:
            errors = sorted(cls(schema).iter_errors(result["structuredContent"]), key=lambda e: e.path)
        except re.error as exc:
            # An ECMA-262 pattern Python cannot run (\p{L}, say): no verdict rather than a guess.
            unrunnable.append(f"{tool['name']!r} ({exc})")
            continue
        judged.append(tool["name"])
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            missed(
                f"tool {tool['name']!r}: structuredContent violates outputSchema at {where}: {err.message}",
                **call.excerpt(),
            )
    if unrunnable:
        ctx.note("not judged, a pattern in the outputSchema cannot run here: " + ", ".join(unrunnable))
    _judged_on(ctx, judged)
    if not judged:
        await _skip_unjudged(
            ctx,
            "no callable tool with an outputSchema returned a successful result"
            if not unrunnable
            else "every outputSchema to judge has a pattern that cannot run here: " + ", ".join(unrunnable),
        )


@check(
    "base.call.text-mirror-present",
    "BASE-CALL-002",
    "structured results also come as JSON text",
    capability="tools",
    revisions=since(FIRST_STRUCTURED_OUTPUT),
)
async def text_mirror_present(ctx: CaseContext) -> None:
    structured = await _structured_results(ctx)
    for tool, call, result in structured:
        if result["structuredContent"] not in json_text_blocks(result):
            missed(
                f"tool {tool['name']!r}: no text block carries the serialized structuredContent",
                **call.excerpt(),
            )
    _judged_on(ctx, [tool["name"] for tool, _, _ in structured])


@check(
    "base.call.text-mirror-equal",
    "BASE-CALL-003",
    "a JSON text block equals structuredContent",
    capability="tools",
    revisions=since(FIRST_STRUCTURED_OUTPUT),
)
async def text_mirror_equal(ctx: CaseContext) -> None:
    judged: list[str] = []
    for tool, call, result in await _structured_results(ctx):
        for value in json_text_blocks(result):
            judged.append(tool["name"])
            if value != result["structuredContent"]:
                missed(
                    f"tool {tool['name']!r}: a JSON text block differs from structuredContent",
                    **call.excerpt(),
                )
    _judged_on(ctx, judged)
    if not judged:
        await _skip_unjudged(ctx, "no called tool returned structuredContent with a JSON text block")


async def _structured_results(ctx: CaseContext) -> list[tuple[dict[str, Any], Any, dict[str, Any]]]:
    """(tool, call, result) for each successful call that returned structuredContent; SKIP if none."""
    found = []
    for tool, call in await _successful_structured_calls(ctx):
        result = succeeded(call)
        if result is not None and "structuredContent" in result:
            found.append((tool, call, result))
    if not found:
        await _skip_unjudged(ctx, "no called tool returned structuredContent")
    return found


UNKNOWN_TOOL = "conformance_no_such_tool_7f3a"


async def _unknown_tool_call(ctx: CaseContext) -> Any:
    call = await ctx.remember_once(
        "unknown-tool",
        "calling an unknown tool",
        lambda: ctx.request("tools/call", {"name": UNKNOWN_TOOL, "arguments": {}}),
    )
    ctx.calls.append(call)
    return call


@check(
    "base.call.unknown-tool-not-success",
    "BASE-CALL-004",
    "calling an unknown tool is not a success",
    capability="tools",
)
async def unknown_tool_not_success(ctx: CaseContext) -> None:
    call = await _unknown_tool_call(ctx)
    result = call.result
    if isinstance(result, dict) and result.get("isError") is not True:
        missed(f"tools/call of unknown tool {UNKNOWN_TOOL!r} succeeded", **call.excerpt())
    if call.error is None and not isinstance(result, dict):
        missed("tools/call of an unknown tool got neither an error nor a result", **call.excerpt())


@check(
    "base.call.unknown-tool-protocol-error",
    "BASE-CALL-005",
    "an unknown tool is a protocol error",
    capability="tools",
)
async def unknown_tool_protocol_error(ctx: CaseContext) -> None:
    call = await _unknown_tool_call(ctx)
    result = call.result
    if isinstance(result, dict) and result.get("isError") is not True:
        # One behaviour, one verdict: a success for a tool that does not exist is BASE-CALL-004's.
        blocked("base.call.unknown-tool-not-success", "the unknown tool's call was answered as a success")
    if call.error is None:
        missed("an unknown tool was answered with an isError result, not a JSON-RPC error", **call.excerpt())
    if call.error_code != jsonrpc.INVALID_PARAMS:
        ctx.note(f"{call.drew()} (-32602 is usual)")


@check(
    "base.call.invalid-arguments", "BASE-CALL-006", "invalid tool arguments are rejected", capability="tools"
)
async def invalid_arguments(ctx: CaseContext) -> None:
    every = await tools(ctx)
    listed = ctx.callable_tools(every)
    if not listed:
        skip_tools_held_back(ctx, no_callable_reason(ctx, every), every)
    sweep = await call_sweep(ctx)
    ctx.facts["tool_calls"] = sweep.summary(SWEEP_FEEDS)
    with_required = [
        t
        for t in sweep.tools
        if isinstance(t.tool.get("inputSchema"), dict)
        and isinstance(t.tool["inputSchema"].get("required"), list)
        and any(isinstance(r, str) for r in t.tool["inputSchema"]["required"])
    ]
    needy = [t for t in with_required if not t.why]
    if not needy:
        if with_required:  # each was left out of the sweep: a call unanswered, no arguments to build
            skip("nothing judged: " + ", ".join(f"{t.name!r} ({t.why})" for t in with_required[:10]))
        skip("no callable tool has a required argument to leave out")
    # Arguments that succeeded, less one required one: then the missing argument alone is refused.
    # A tool that refused every candidate would refuse this call for the same reason: that proves
    # nothing about input validation, so without a success nothing is judged.
    chosen = next((t for t in needy if t.success is not None), None)
    if chosen is None:
        refused = ", ".join(repr(t.name) for t in needy[:10])
        skip(
            "nothing judged: no tool with a required argument accepted a call, so a refusal without "
            f"one would prove nothing (refused every candidate: {refused})"
        )
    tool = chosen.tool
    args = copy.deepcopy(chosen.arguments() or {})
    dropped = next(r for r in tool["inputSchema"]["required"] if isinstance(r, str))
    args.pop(dropped, None)
    ctx.note(f"{tool['name']!r} without {dropped!r}, from arguments it accepted")
    call = await ctx.request("tools/call", {"name": tool["name"], "arguments": args})
    result = call.result
    if isinstance(result, dict) and result.get("isError") is not True:
        missed(
            f"tool {tool['name']!r} accepted a call without required argument {dropped!r}", **call.excerpt()
        )
    if call.error is not None and call.error_code != jsonrpc.INVALID_PARAMS:
        # The code is the schema's InvalidParamsError, not a MUST of the text: a SHOULD-level miss.
        ctx.miss_should(f"rejected with {call.drew()}; -32602 or an isError result is expected")
        return
    ctx.note("rejected as " + ("JSON-RPC -32602" if call.error is not None else "an isError result"))
