"""Whether the server offers the official suite's fixture, and its tools' calls as the base pack made them.

Why one module: every row of the pack asks the same two questions first (is the fixture offered at all,
is this row's tool among it) and reads calls the base pack's sweeps already made, so a server without the
fixture is told once, in the same words, with nothing sent, and a server with it is called once per tool
whichever packs run (the tool sweep and the input sweep are remembered per target and revision).
"""

from __future__ import annotations

from typing import Any, NoReturn

from conformance.pack_api import Call, CaseContext, skip, weak
from conformance_packs.base.common import call_sweep, skip_tools_held_back
from conformance_packs.base.input_sweep import InputSweep, input_sweep

#: The tool names the official suite's server scenarios call or list (its everything-server's fixture):
#: a server that lists any of them offers the fixture.
FIXTURE_TOOLS = frozenset(
    {
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_reconnection",
        "json_schema_2020_12_tool",
        "test_missing_capability",
        "test_trigger_tool_change",
        "test_trigger_prompt_change",
        "test_input_required_result_elicitation",
        "test_input_required_result_sampling",
        "test_input_required_result_list_roots",
        "test_input_required_result_request_state",
        "test_input_required_result_multiple_inputs",
        "test_input_required_result_multi_round",
    }
)
#: The prompt names of the official suite's fixture (its prompts scenarios').
FIXTURE_PROMPTS = frozenset(
    {
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    }
)
#: Why every case SKIPs on a server without the fixture.
NOT_OFFERED = (
    "the server does not offer the official conformance suite's fixture (tools/list names none of its "
    "tools, such as test_simple_text)"
)


async def offered(ctx: CaseContext) -> dict[str, dict[str, Any]]:
    """The fixture's tools the server lists, by name; SKIP "not applicable" when it lists none of the
    fixture's tools or prompts (no tools capability: nothing is sent at all; else the shared tools/list
    and prompts/list, which the base pack reads anyway, not attached to the case as its own)."""
    if not ctx.identity.has("tools"):
        skip(NOT_OFFERED, kind="not-applicable")
    listing = await ctx.list_all("tools/list", "tools", attach=False)
    listed = [t for t in listing.items if isinstance(t, dict) and isinstance(t.get("name"), str)]
    named = {str(t["name"]): t for t in listed if t["name"] in FIXTURE_TOOLS}
    if not named and ctx.identity.has("prompts"):
        prompts = await ctx.list_all("prompts/list", "prompts", attach=False)
        if any(isinstance(p, dict) and p.get("name") in FIXTURE_PROMPTS for p in prompts.items):
            return {}  # the fixture offered without its tools: each row says which tool it lacks
    if not named:
        skip(NOT_OFFERED, kind="not-applicable")
    return named


async def fixture_tool(ctx: CaseContext, name: str, official: str) -> dict[str, Any]:
    """The fixture's tool `name`: WARN when the fixture is offered without it (the official suite fails
    `official` then; no sentence of the specification asks for a tool by name)."""
    named = await offered(ctx)
    tool = named.get(name)
    if tool is None:
        incomplete(f"its tool {name!r}", official, named)
    return tool


def incomplete(what: str, official: str, named: dict[str, Any]) -> NoReturn:
    """WARN: the fixture is offered without `what`, which the official suite's `official` needs."""
    weak(
        f"the server offers the official fixture but not {what}: the official suite fails {official} "
        "without it",
        diagnostics="fixture tools listed: " + ", ".join(sorted(named)),
    )


def callable_or_skip(ctx: CaseContext, tool: dict[str, Any]) -> None:
    """SKIP (needs --call-tools all) when the run's one tool policy does not let a case call `tool`."""
    if not ctx.may_call(tool):
        skip_tools_held_back(
            ctx,
            f"the fixture's tool {tool['name']!r} is not annotated readOnlyHint: true, which --call-tools "
            "safe (the default) requires",
            [tool],
        )


async def first_call(ctx: CaseContext, name: str, official: str) -> Call:
    """The first answered call of the fixture's tool `name` in the base pack's tool sweep (made on the
    shared session, with the arguments its empty inputSchema allows)."""
    tool = await fixture_tool(ctx, name, official)
    callable_or_skip(ctx, tool)
    sweep = await call_sweep(ctx)
    entry = next((e for e in sweep.tools if e.name == name), None)
    if entry is None or not entry.calls:
        skip(f"the fixture's tool {name!r} was not answered: {entry.why if entry else 'not called'}")
    return entry.calls[0][1]


async def declared_sweep(ctx: CaseContext, name: str, official: str) -> InputSweep:
    """The base pack's input sweep (every callable tool called by a client that declared sampling, form
    elicitation and roots, answering what the server asks: legacy requests, or 2026-07-28
    InputRequiredResults retried), once it called the fixture's tool `name`."""
    tool = await fixture_tool(ctx, name, official)
    callable_or_skip(ctx, tool)
    sweep = await input_sweep(ctx)
    if name not in sweep.called:
        skip(f"the input sweep did not call the fixture's tool {name!r}: {sweep.why or 'not callable'}")
    return sweep


def texts(result: Any) -> list[str]:
    """The text of each text block of a result's content."""
    content = result.get("content") if isinstance(result, dict) else None
    return [
        b["text"]
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def blocks(result: Any, kind: str) -> list[dict[str, Any]]:
    """The content blocks of type `kind` in a result."""
    content = result.get("content") if isinstance(result, dict) else None
    return [
        b
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and b.get("type") == kind
    ]
