"""The document against the live server: tool names, input schemas, output envelopes, stability.

Gap rule G-D1 would run these against a document synthesised from tools/list when none is served;
that comparison could never fail, so here they SKIP instead (see the suite's requirement rows).
"""

from __future__ import annotations

import json
from typing import Any

from conformance.pack_api import CaseContext, check, missed, skip, unjudgeable, weak
from conformance_packs.dw_discovery.common import judged, with_tools
from conformance_packs.dw_discovery.document import (
    TOOL_RESULTS_ID,
    breaking_changes,
    contract_view,
    describe,
    json_differences,
    strip_annotations,
    tools_of,
    validate_with,
)
from conformance_packs.dw_discovery.locate import (
    Refused,
    fetch,
    list_all,
    local_path,
    may_call,
    parse_json,
    settings,
)


async def live_tools(ctx: CaseContext) -> dict[str, dict[str, Any]]:
    """tools/list by name; a server without the tools capability lists none."""
    if not ctx.identity.has("tools"):
        ctx.note("the server offers no tools capability: no live tools")
        return {}
    items, problem = await list_all(ctx, "tools/list", "tools")
    if problem and not items:
        unjudgeable(f"cannot compare with the live server: {problem}")
    return {t["name"]: t for t in items if isinstance(t.get("name"), str)}


def _documented(tools: list[dict[str, Any]]) -> list[str]:
    return [t["name"] for t in tools if isinstance(t.get("name"), str)]


@check("dw-discovery.live.tools-live", "DWD-TOOL-001", "every documented tool is live", once=True)
async def tools_live(ctx: CaseContext) -> None:
    _, _, _, tools = await with_tools(ctx)
    live = await live_tools(ctx)
    ghosts = [name for name in _documented(tools) if name not in live]
    if ghosts:
        missed(
            f"tools in the document but not in tools/list: {ghosts[:10]!r} (live: {sorted(live)[:10]!r})",
            ghosts=ghosts,
        )
    ctx.note(f"{len(_documented(tools))} documented tools are live")


@check("dw-discovery.live.tools-documented", "DWD-TOOL-001", "every live tool is documented", once=True)
async def tools_documented(ctx: CaseContext) -> None:
    _, document, _ = await judged(ctx)
    if not isinstance(document.get("tools"), list):
        skip("the document's tools is not an array (DWD-DOC-002 or DWD-DOC-007 reports it)")
    live = await live_tools(ctx)
    documented = set(_documented(tools_of(document)))
    missing = [name for name in live if name not in documented]
    if missing:
        weak(f"incomplete-discovery: live tools absent from the document: {missing[:10]!r}", missing=missing)


@check(
    "dw-discovery.live.input-schemas",
    "DWD-TOOL-002",
    "documented input schemas equal the live ones",
    once=True,
)
async def input_schemas(ctx: CaseContext) -> None:
    _, _, _, tools = await with_tools(ctx)
    live = await live_tools(ctx)
    compared, differing = 0, []
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or name not in live or "input_schema" not in tool:
            continue
        compared += 1
        diffs = json_differences(
            strip_annotations(tool["input_schema"]), strip_annotations(live[name].get("inputSchema"))
        )
        if diffs:
            differing.append(f"{name!r}: " + ", ".join(diffs[:5]))
    if differing:
        missed(
            "input_schema (document) differs from inputSchema (tools/list), description and title aside: "
            + "; ".join(differing[:5]),
            differing=differing,
        )
    if not compared:
        skip("no documented tool with an input_schema is live")
    ctx.note(f"{compared} input schemas equal")


def _smoke_arguments(tool: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments the document itself offers: input_schema.examples[0], or {} with nothing required."""
    schema = tool.get("input_schema")
    if not isinstance(schema, dict):
        return None
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], dict):
        return dict(examples[0])
    return {} if not schema.get("required") else None


def _envelope(result: dict[str, Any]) -> Any:
    """G-D5: structuredContent, else the first text block that parses as JSON with a `schema` member."""
    if "structuredContent" in result:
        return result["structuredContent"]
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            value, error = parse_json(block["text"])
            if error is None and isinstance(value, dict) and "schema" in value:
                return value
    return None


@check(
    "dw-discovery.live.output-envelopes",
    "DWD-TOOL-003",
    "tools whose output_schema is the envelope id return valid envelopes",
    once=True,
)
async def output_envelopes(ctx: CaseContext) -> None:
    _, _, _, tools = await with_tools(ctx)
    declared = [
        t for t in tools if t.get("output_schema") == TOOL_RESULTS_ID and isinstance(t.get("name"), str)
    ]
    if not declared:
        skip(f"no documented tool declares output_schema {TOOL_RESULTS_ID!r}")
    live = await live_tools(ctx)
    configured = settings(ctx).get("smoke_arguments", {})
    judged_tools, passed_by = 0, []
    for tool in declared:
        name = tool["name"]
        if name not in live:
            passed_by.append(f"{name}: not live")
            continue
        arguments = configured.get(name)
        if arguments is None:
            if not may_call(ctx, live[name]):
                passed_by.append(f"{name}: not annotated readOnlyHint: true (or tool calls are off)")
                continue
            arguments = _smoke_arguments(tool)
            if arguments is None:
                passed_by.append(
                    f"{name}: needs [dw-discovery] smoke_arguments (required inputs, no examples)"
                )
                continue
        call = await ctx.request("tools/call", {"name": name, "arguments": arguments})
        if not isinstance(call.result, dict):
            missed(f"{name}: the smoke call was answered with error {call.error_code!r}", **call.excerpt())
        envelope = _envelope(call.result)
        if envelope is None:
            missed(
                f"{name}: no envelope (no structuredContent, no JSON text block with schema)",
                **call.excerpt(),
            )
        judged_tools += 1
        problems = validate_with(TOOL_RESULTS_ID, envelope)
        if problems:
            plural = [p for p in problems if p.pointer == "/schema" and p.keyword == "const"]
            if len(plural) == len(problems) and envelope.get("schema") == TOOL_RESULTS_ID:
                ctx.soft_warn(f"id-mismatch: {name} puts the plural id {TOOL_RESULTS_ID!r} in the envelope")
                continue
            missed(
                f"{name}: the envelope violates {TOOL_RESULTS_ID}: {describe(problems)}",
                violations=[p.as_dict() for p in problems],
                **call.excerpt(),
            )
    if not judged_tools:
        skip("no envelope tool could be called: " + "; ".join(passed_by))
    ctx.note(
        f"{judged_tools} envelope(s) valid" + (f"; not called: {'; '.join(passed_by)}" if passed_by else "")
    )


@check(
    "dw-discovery.doc.stable",
    "DWD-TOOL-004",
    "the contract is stable: fetches agree, no breaking change against a baseline",
    once=True,
)
async def stable(ctx: CaseContext) -> None:
    found, document, _ = await judged(ctx)
    assert found.source is not None
    done: list[str] = []
    if found.source.kind != "file":
        text, value, problem, evidence = await fetch(ctx, found.source)
        if problem is not None:
            missed(f"a second fetch from the {found.source.describe()} failed: {problem}", **evidence)
        second, error = parse_json(text) if text is not None else (value, None)
        if error is not None:
            missed(f"the second fetch is not JSON: {error}", **evidence)
        diffs = json_differences(contract_view(document), contract_view(second))
        if diffs:
            missed("two fetches in one session differ beyond descriptions: " + "; ".join(diffs), **evidence)
        done.append("two fetches in one session agree (descriptions aside)")
    try:
        baseline_name = settings(ctx).get("baseline")
    except Refused as exc:
        unjudgeable(str(exc))
    if baseline_name:
        baseline = _baseline(ctx, baseline_name)
        breaks, note = breaking_changes(baseline, document)
        if breaks:
            missed(f"breaking changes against the baseline {baseline_name!r}: " + "; ".join(breaks[:10]))
        done.append(f"no breaking change against {baseline_name!r}" + (f" ({note})" if note else ""))
    if not done:
        skip("needs: a baseline ([dw-discovery] baseline = FILE); a file source is not fetched twice")
    ctx.note("; ".join(done))


def _baseline(ctx: CaseContext, name: str) -> Any:
    try:
        text = local_path(ctx, name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        unjudgeable(f"[dw-discovery] baseline {name!r} cannot be read: {exc}")
    try:
        return json.loads(text)
    except ValueError as exc:
        unjudgeable(f"[dw-discovery] baseline {name!r} is not JSON: {exc}")
