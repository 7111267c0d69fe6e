"""Tasks (2025-11-25): what a server that does not take tasks must do with a task-augmented request.

The mcp SDK 2.3.0 builds no task-serving server (it has the task types, not a task store), so the
reference declares no `tasks` capability; this module judges what a black-box client can see of a
server in that position, which is most servers.
"""

from __future__ import annotations

from typing import Any

from conformance.engine.checks import check, missed, skip
from conformance.engine.context import CaseContext
from conformance_packs.base.common import call_sweep, no_callable_reason

#: The task metadata a client adds to a request it wants run as a task (2025-11-25 TaskMetadata).
TASK: dict[str, Any] = {"ttl": 60000}


@check(
    "base.tasks.undeclared-augmentation",
    "BASE-TASK-001",
    "a task-augmented call to a server without tasks for tools/call is processed normally",
    revisions=("2025-11-25",),
)
async def undeclared_augmentation(ctx: CaseContext) -> None:
    tasks = ctx.identity.capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    if isinstance(tools, dict) and isinstance(tools.get("call"), dict):
        skip("the server declares tasks.requests.tools.call: task augmentation is its to accept")
    sweep = await call_sweep(ctx)
    done = [(t, t.arguments()) for t in sweep.tools if t.success is not None]
    if not done:
        why = no_callable_reason(ctx) if not sweep.tools else sweep.line()
        skip(f"no tool call succeeded to repeat as a task: {why}")
    entry, arguments = done[0]
    call = await ctx.request("tools/call", {"name": entry.name, "arguments": arguments, "task": TASK})
    ctx.note(f"repeated the successful call of {entry.name!r} with params.task {TASK}")
    result = call.result
    if isinstance(result, dict) and isinstance(result.get("task"), dict):
        missed(
            "the server answered with a CreateTaskResult although it declares no tasks for tools/call",
            **call.excerpt(),
        )
    if call.error is not None or not isinstance(result, dict) or not isinstance(result.get("content"), list):
        missed(
            f"the call of {entry.name!r} that succeeded without params.task "
            "was not processed normally with it",
            **call.excerpt(),
        )
