"""The fixture's list-change triggers (FIXTURE-018, -019): in 2026-07-28, a server that declares
tools.listChanged (prompts.listChanged) notifies an open subscriptions/listen stream that asked for
toolsListChanged (promptsListChanged) when the fixture's trigger tool is called.

The listen is the base pack's one mechanism (`listen_during`: held open on stdio and over Streamable
HTTP while the trigger is called on the shared session, then cancelled).
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, check, missed, skip
from conformance_packs.base.listening import listen_during
from conformance_packs.official_fixture.fixture import callable_or_skip, fixture_tool


async def judge_list_change(ctx: CaseContext, kind: str, trigger: str, official: str) -> None:
    """Listen for `kind`'s list changes, call `trigger` meanwhile, and find the notification tagged with
    the listen's subscription id."""
    declared = (ctx.identity.capabilities or {}).get(kind)
    if not (isinstance(declared, dict) and declared.get("listChanged") is True):
        skip(f"the server does not declare {kind}.listChanged", kind="not-applicable")
    tool = await fixture_tool(ctx, trigger, official)
    callable_or_skip(ctx, tool)
    method = f"notifications/{kind}/list_changed"

    async def call_trigger() -> float:
        call = await ctx.request("tools/call", {"name": trigger, "arguments": {}})
        return call.reply.elapsed

    def settled(events: list[Any]) -> bool:
        return any(
            e.frame is not None and isinstance(e.frame.value, dict) and e.frame.value.get("method") == method
            for e in events
        )

    params = {"notifications": {f"{kind}ListChanged": True}}
    flow = await listen_during(ctx, params, call_trigger, settled)
    if flow.failure or flow.closed:
        missed(f"subscriptions/listen drew no stream to hear the change on: {flow.failure or flow.closed}")
    tagged = [m for m in flow.tagged() if m.method == method]
    if not tagged:
        missed(
            f"{trigger} was called while a subscriptions/listen asking for {kind}ListChanged was open, and "
            f"no {method} tagged with its subscription id came",
            diagnostics="; ".join(m.text(200) for m in flow.messages[:10]),
        )
    ctx.note(f"{method} came on the listen stream: {tagged[0].text(200)}")


@check(
    "official-fixture.changes.tools",
    "FIXTURE-018",
    "a listen stream hears of the tool list change test_trigger_tool_change makes",
    eras=("modern",),
)
async def tools_changed(ctx: CaseContext) -> None:
    await judge_list_change(
        ctx, "tools", "test_trigger_tool_change", "sep-2575-server-sends-tools-list-changed-on-subscription"
    )


@check(
    "official-fixture.changes.prompts",
    "FIXTURE-019",
    "a listen stream hears of the prompt list change test_trigger_prompt_change makes",
    eras=("modern",),
)
async def prompts_changed(ctx: CaseContext) -> None:
    await judge_list_change(
        ctx,
        "prompts",
        "test_trigger_prompt_change",
        "sep-2575-server-sends-prompts-list-changed-on-subscription",
    )
