"""tools/call as a client sends it: the scenario's tool called with arguments of its input schema."""

from __future__ import annotations

from conformance.pack_api import ClientContext, client_check, missed
from conformance_packs.client.common import params_of, shape, shown


@client_check(
    "client.tools.call",
    "CLIENT-TOOLS-001",
    "tools/call names the tool and passes an arguments object its inputSchema accepts",
    scenario="tools_call",
)
async def tools_call(ctx: ClientContext) -> None:
    calls = ctx.needs("tools/call", "call add_numbers")
    params = params_of(calls[0].value)
    problems = shape("callToolParams", params)
    if problems:
        missed(
            "the tools/call params do not match the schema: " + "; ".join(problems), request=calls[0].value
        )
    if params.get("name") != "add_numbers":
        ctx.miss_should(f"the client called {shown(params.get('name'))}, not the scenario's add_numbers")
        return
    arguments = params.get("arguments") or {}
    wrong = [
        k
        for k in ("a", "b")
        if not isinstance(arguments.get(k), int | float) or isinstance(arguments.get(k), bool)
    ]
    if wrong:
        ctx.miss_should(f"add_numbers was called without numbers for {', '.join(wrong)}: {arguments}")
