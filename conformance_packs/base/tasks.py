"""Tasks (2025-11-25 basic/utilities/tasks), as a black-box client sees them, and what is left of them
in 2026-07-28.

A server that does not take tasks must process a task-augmented request normally (BASE-TASK-001) and
answer the tasks methods it does not declare with -32601 (BASE-TASK-013). A server that declares
tasks.requests.tools.call is judged on one task it is asked to run (`task_run`, once per target and
revision): a tool it lists with execution.taskSupport "optional" whose plain call succeeded in the
tools sweep, else a callable "required" one; its CreateTaskResult, tasks/get, tasks/result,
tasks/cancel and tasks/list (BASE-TASK-002 to -010), and the tool-level negotiation (-011, -012). In
2026-07-28 tasks left the core for an extension: the methods it does not have are -32601 (-014); a
server that offers the extension is judged by the tasks suite (conformance_packs/tasks).
Every case notes the tool it called.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import Call, CaseContext, NotSent, blocked, check, missed, skip, weak
from conformance_packs.base.common import (
    call_sweep,
    declares_tasks,
    no_callable_reason,
    skip_tools_held_back,
    task_support,
    tools,
)

#: The task metadata a client adds to a request it wants run as a task (2025-11-25 TaskMetadata). The
#: ttl outlasts a target's default budget (600 s): a server may forget a task once its ttl has elapsed,
#: and a slow run must not read that as a task "not found".
TASK: dict[str, Any] = {"ttl": 900_000}
#: TASK as a message shows it: JSON text, never a Python dict's repr.
TASK_TEXT = json.dumps(TASK)


@check(
    "base.tasks.undeclared-augmentation",
    "BASE-TASK-001",
    "a task-augmented call to a server without tasks for tools/call is processed normally",
    revisions=("2025-11-25",),
)
async def undeclared_augmentation(ctx: CaseContext) -> None:
    if declares_tasks(ctx, "requests", "tools", "call"):
        skip(
            "the server declares every task capability this row needs undeclared "
            "(tasks.requests.tools.call): task augmentation is its to accept, "
            "the rows from BASE-TASK-002 judge it"
        )
    sweep = await call_sweep(ctx)
    done = [(t, t.arguments()) for t in sweep.tools if t.success is not None]
    if not done:
        why = sweep.why_nothing(ctx)
        skip(f"no tool call succeeded to repeat as a task: {why}")
    entry, arguments = done[0]
    call = await ctx.request("tools/call", {"name": entry.name, "arguments": arguments, "task": TASK})
    ctx.note(f"repeated the successful call of {entry.name!r} with params.task {TASK_TEXT}")
    result = call.result
    if isinstance(result, dict) and isinstance(result.get("task"), dict):
        missed(
            "the server answered with a CreateTaskResult although it declares no tasks for tools/call",
            **call.excerpt(),
        )
    if call.error is not None or not isinstance(result, dict) or not isinstance(result.get("content"), list):
        error = call.error if isinstance(call.error, dict) else {}
        said = f": {error['message'][:120]}" if isinstance(error.get("message"), str) else ""
        missed(
            f"the call of {entry.name!r} that succeeded without params.task "
            f"was not processed normally with it: it drew {_answer(call)}{said}",
            **call.excerpt(),
        )


# ---------------------------------------------------------------------- a server that declares tasks

#: The five statuses of 2025-11-25 TaskStatus, and the terminal three ("Task Status Lifecycle").
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = ("completed", "failed", "cancelled")
RELATED_TASK = "io.modelcontextprotocol/related-task"
#: A task ID no server issued (the unknown-ID probes), and a tasks/list cursor no server gave.
NO_SUCH_TASK = "conformance-no-such-task-7f3a9c"
NO_SUCH_CURSOR = "conformance-no-such-cursor-7f3a9c"
#: The 2026-07-28 tasks extension's identifier (SEP-2663), under capabilities.extensions.
MODERN_TASKS = "io.modelcontextprotocol/tasks"
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")


def need_tool_tasks(ctx: CaseContext) -> None:
    if not declares_tasks(ctx, "requests", "tools", "call"):
        skip("the server does not declare tasks.requests.tools.call: it takes no task-augmented tools/call")


def task_problems(task: Any, what: str) -> list[str]:
    """What `task` lacks of 2025-11-25 Task (required taskId, status, createdAt, lastUpdatedAt, ttl)."""
    if not isinstance(task, dict):
        return [f"{what} is not an object"]
    out = []
    for key in ("taskId", "createdAt", "lastUpdatedAt"):
        if not isinstance(task.get(key), str):
            out.append(f"{what}.{key} is {'missing' if key not in task else 'not a string'}")
    if task.get("status") not in STATUSES:
        out.append(f"{what}.status {task.get('status')!r} is not one of {', '.join(STATUSES)}")
    ttl = task.get("ttl", "missing")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int)):
        out.append(f"{what}.ttl is {'missing' if ttl == 'missing' else repr(ttl)}, not an integer or null")
    poll = task.get("pollInterval")
    if "pollInterval" in task and (isinstance(poll, bool) or not isinstance(poll, int)):
        out.append(f"{what}.pollInterval {poll!r} is not an integer")
    if "statusMessage" in task and not isinstance(task.get("statusMessage"), str):
        out.append(f"{what}.statusMessage is not a string")
    return out


def _answer(call: Call) -> str:
    """What a call drew, in a few words: an error's code, or a result (an isError one said so, with the
    start of its text: an SDK may wrap the error it meant into a tool result)."""
    if call.error is not None:
        return f"error {call.error_code}"
    if call.reply.response is None:
        return call.no_answer()
    result = call.result
    if isinstance(result, dict) and result.get("isError") is True:
        content = result.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        text = next((b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)), "")
        return f"a result with isError: true ({text[:100]!r}), not a JSON-RPC error"
    return "a result"


async def not_refused_with(
    ctx: CaseContext, methods: list[str], code: int
) -> tuple[list[str], dict[str, Any]]:
    """Ask each of `methods` (for taskId NO_SUCH_TASK; tasks/list with no cursor): those not answered
    with error `code`, each with what it drew, and every answer's excerpt for the evidence."""
    wrong, calls = [], {}
    for method in methods:
        call = await ctx.request(method, {} if method == "tasks/list" else {"taskId": NO_SUCH_TASK})
        calls[method] = call.excerpt(600)
        if call.error_code != code:
            wrong.append(f"{method}: {_answer(call)}")
    return wrong, calls


async def call_tool(ctx: CaseContext, params: dict[str, Any]) -> Call:
    """tools/call on the shared session; one the session did not send (tools/call already hung twice
    in this revision: a slow tool breaks no rule) leaves the case nothing to judge, so SKIP."""
    try:
        return await ctx.request("tools/call", params)
    except NotSent as exc:
        skip(f"tools/call of {params.get('name')!r} was {exc}")


def _listed(statuses: list[str | None]) -> str:
    """Statuses as a message shows them: comma-separated, a missing one said so (never `None`)."""
    return ", ".join(s if s is not None else "(no status)" for s in statuses)


def status_of(call: Call | None) -> str | None:
    result = call.result if call is not None else None
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


@dataclass
class TaskRun:
    """One task-augmented tools/call and what was asked of its task: tasks/get at once, tasks/result
    (which blocks until the task is terminal), then tasks/get twice."""

    tool: dict[str, Any]
    arguments: dict[str, Any]
    create: Call
    task_id: str | None = None
    first_get: Call | None = None
    result: Call | None = None
    later_gets: list[Call] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.tool["name"])

    def said(self) -> str:
        return f"called {self.name!r} ({task_support(self.tool)}) with params.task {TASK_TEXT}"


async def _task_tool(ctx: CaseContext) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """A tool to call as a task and its arguments: an "optional" one whose plain call succeeded in
    the tools sweep, else a callable "required" one with its first careful candidate; or why none."""
    sweep = await call_sweep(ctx)
    for entry in sweep.tools:
        if task_support(entry.tool) == "optional" and entry.success is not None:
            return entry.tool, entry.arguments() or {}
    listed = await tools(ctx)
    required = [t for t in ctx.callable_tools(listed) if task_support(t) == "required"]
    if required:
        arguments = await first_candidate(required[0])
        if arguments is not None:
            return required[0], arguments
    if not listed:
        return "tools/list offers no tool"
    if not any(task_support(t) in ("optional", "required") for t in listed):
        return 'no listed tool has execution.taskSupport "optional" or "required"'
    why = sweep.why_nothing(ctx)
    return f"no tool that may be called as a task could be called ({why})"


async def first_candidate(tool: dict[str, Any]) -> dict[str, Any] | None:
    from conformance.pack_api import drawing

    drawn = drawing(tool.get("inputSchema", {}))
    text = await asyncio.to_thread(drawn.get, 0)
    return json.loads(text) if text is not None else None


async def task_run(ctx: CaseContext) -> TaskRun:
    """The shared task of the tasks rows (once per target and revision): SKIP when the server takes no
    task-augmented tools/call or has no tool to call as one."""
    need_tool_tasks(ctx)

    async def make() -> TaskRun | str:
        chosen = await _task_tool(ctx)
        if isinstance(chosen, str):
            return chosen
        tool, arguments = chosen
        try:
            create = await ctx.request(
                "tools/call", {"name": tool["name"], "arguments": arguments, "task": TASK}
            )
        except NotSent as exc:
            return f"{tool['name']!r} was not called as a task: {exc}"
        run = TaskRun(tool, arguments, create)
        result = create.result
        task = result.get("task") if isinstance(result, dict) else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            return run
        run.task_id = task_id
        run.first_get = await ctx.request("tasks/get", {"taskId": task_id})
        run.result = await ctx.request("tasks/result", {"taskId": task_id})
        for _ in range(2):
            run.later_gets.append(await ctx.request("tasks/get", {"taskId": task_id}))
        return run

    made = await ctx.remember_once("task-run", "calling a tool as a task", make)
    if isinstance(made, str):
        skip(made)
    ctx.note(made.said())
    return made


async def created(ctx: CaseContext) -> TaskRun:
    """The shared task, which the server must have created (BASE-TASK-002 judges the answer)."""
    run = await task_run(ctx)
    if run.task_id is None:
        blocked("base.tasks.create-result", f"the task-augmented call of {run.name!r} created no task")
    return run


@check(
    "base.tasks.create-result",
    "BASE-TASK-002",
    "a task-augmented tools/call is answered with a CreateTaskResult whose task is working",
    revisions=("2025-11-25",),
)
async def create_result(ctx: CaseContext) -> None:
    run = await task_run(ctx)
    call, result = run.create, run.create.result
    if call.error is not None or not isinstance(result, dict) or "task" not in result:
        weak(
            "the server declares tasks.requests.tools.call and lists "
            f"{run.name!r} with execution.taskSupport "
            f"{task_support(run.tool)!r}, but did not accept the task-augmented call (no CreateTaskResult)",
            **call.excerpt(),
        )
    problems = task_problems(result["task"], "result.task")
    if problems:
        missed("the CreateTaskResult breaks the schema's Task: " + "; ".join(problems), **call.excerpt())
    if result["task"]["status"] != "working":
        missed(f"the task began in status {result['task']['status']!r}, not 'working'", **call.excerpt())


@check(
    "base.tasks.get-shape",
    "BASE-TASK-003",
    "tasks/get answers the task with its ID, a status among the five, and its timestamps and ttl",
    revisions=("2025-11-25",),
)
async def get_shape(ctx: CaseContext) -> None:
    run = await created(ctx)
    for call in [run.first_get, *run.later_gets]:
        if call is None:
            continue
        if call.error is not None or not isinstance(call.result, dict):
            missed(
                f"tasks/get of the task {run.task_id!r} just created was not answered with the task",
                **call.excerpt(),
            )
        problems = task_problems(call.result, "result")
        if call.result.get("taskId") != run.task_id:
            problems.append(f"result.taskId {call.result.get('taskId')!r} is not the task asked for")
        if problems:
            missed(
                "the tasks/get result breaks the schema's GetTaskResult: " + "; ".join(problems),
                **call.excerpt(),
            )


@check(
    "base.tasks.terminal-final",
    "BASE-TASK-004",
    "once tasks/result has answered, tasks/get shows a terminal status that never changes",
    revisions=("2025-11-25",),
)
async def terminal_final(ctx: CaseContext) -> None:
    run = await created(ctx)
    if run.result is None or not run.later_gets:
        skip("tasks/result was not asked")
    statuses = [status_of(c) for c in run.later_gets]
    first = status_of(run.first_get)
    evidence = {f"get_{i}": c.excerpt(600) for i, c in enumerate([run.first_get, *run.later_gets]) if c}
    if first in TERMINAL and any(s != first for s in statuses):
        missed(f"the task was {first!r} (terminal) and later {_listed(statuses)}", **evidence)
    if statuses[0] not in TERMINAL:
        missed(
            "tasks/result had answered (it blocks until the task is terminal), "
            f"yet tasks/get reports {statuses[0]!r}",
            **evidence,
        )
    if any(s != statuses[0] for s in statuses):
        missed(
            f"the terminal status {statuses[0]!r} changed on the next poll: {_listed(statuses)}", **evidence
        )
    ctx.note(f"tasks/get after tasks/result: {_listed(statuses)}")


@check(
    "base.tasks.result-underlying",
    "BASE-TASK-005",
    "tasks/result of a terminal task returns what the tools/call would have returned",
    revisions=("2025-11-25",),
)
async def result_underlying(ctx: CaseContext) -> None:
    run = await created(ctx)
    call = run.result
    if call is None:
        skip("tasks/result was not asked")
    status = next((s for s in map(status_of, run.later_gets) if s), None)
    if call.error is not None:
        if status == "failed" and task_support(run.tool) == "required":
            ctx.note("the task failed and tasks/result returned its JSON-RPC error")
            return
        missed(
            f"tasks/result of the {status or 'terminal'} task answered an error, but {run.name!r} with the "
            "same arguments succeeded as a plain call",
            **call.excerpt(),
        )
    result = call.result
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list) or not all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
    ):
        missed(
            "tasks/result of a tools/call task is not a CallToolResult (no content array of blocks)",
            **call.excerpt(),
        )
    if status == "completed" and result.get("isError") is True:
        ctx.miss_should(
            "the task is 'completed' but its result has isError: true (a tool error should fail it)"
        )


@check(
    "base.tasks.result-related-task",
    "BASE-TASK-006",
    "the tasks/result response carries io.modelcontextprotocol/related-task with the task's ID",
    revisions=("2025-11-25",),
)
async def result_related_task(ctx: CaseContext) -> None:
    run = await created(ctx)
    call = run.result
    if call is None or not isinstance(call.result, dict):
        skip("tasks/result answered no result to carry _meta (an error has none)")
    meta = call.result.get("_meta")
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    if not isinstance(related, dict) or related.get("taskId") != run.task_id:
        missed(
            f"the tasks/result response's _meta lacks {RELATED_TASK} {{taskId: {run.task_id!r}}}",
            **call.excerpt(),
        )


@check(
    "base.tasks.cancel-terminal",
    "BASE-TASK-007",
    "tasks/cancel of a task in a terminal status is refused with -32602",
    revisions=("2025-11-25",),
)
async def cancel_terminal(ctx: CaseContext) -> None:
    if not declares_tasks(ctx, "cancel"):
        skip("the server does not declare tasks.cancel")
    run = await created(ctx)
    seen = [status_of(c) for c in run.later_gets]
    status = next((s for s in seen if s in TERMINAL), None)
    if status is None:
        skip(f"the task never showed a terminal status ({seen})")
    call = await ctx.request("tasks/cancel", {"taskId": run.task_id})
    ctx.note(f"tasks/cancel of the task {run.task_id!r}, {status!r}")
    if call.error_code != -32602:
        missed(
            f"tasks/cancel of a {status!r} task was answered with {_answer(call)}, not -32602",
            **call.excerpt(),
        )
    after = await ctx.request("tasks/get", {"taskId": run.task_id})
    if status_of(after) != status:
        missed(
            f"after the refused cancel the {status!r} task reports {status_of(after)!r}", **after.excerpt()
        )


@check(
    "base.tasks.cancel-working",
    "BASE-TASK-008",
    "tasks/cancel of a working task answers it cancelled, and it stays cancelled",
    revisions=("2025-11-25",),
)
async def cancel_working(ctx: CaseContext) -> None:
    if not declares_tasks(ctx, "cancel"):
        skip("the server does not declare tasks.cancel")
    run = await created(ctx)
    create = await call_tool(ctx, {"name": run.name, "arguments": run.arguments, "task": TASK})
    task = create.result.get("task") if isinstance(create.result, dict) else None
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if not isinstance(task_id, str):
        skip(f"a second task-augmented call of {run.name!r} created no task")
    call = await ctx.request("tasks/cancel", {"taskId": task_id})
    ctx.note(f"called {run.name!r} as a task again and cancelled it at once")
    gets = [await ctx.request("tasks/get", {"taskId": task_id}) for _ in range(2)]
    statuses = [status_of(g) for g in gets]
    evidence = {"cancel": call.excerpt(800), **{f"get_{i}": g.excerpt(600) for i, g in enumerate(gets)}}
    if call.error is not None:
        if call.error_code == -32602 and statuses[0] in ("completed", "failed"):
            skip(f"the task was already {statuses[0]!r} when the cancel came (refused as the page requires)")
        missed(
            f"tasks/cancel of a task that was not terminal was answered with error {call.error_code}",
            **evidence,
        )
    if status_of(call) != "cancelled":
        missed(f"tasks/cancel answered status {status_of(call) or '(none)'}, not 'cancelled'", **evidence)
    if any(s != "cancelled" for s in statuses):
        missed(f"the cancelled task later reports {_listed(statuses)}", **evidence)


@check(
    "base.tasks.unknown-id",
    "BASE-TASK-009",
    "tasks/get, tasks/result and tasks/cancel of an unknown taskId are -32602",
    revisions=("2025-11-25",),
)
async def unknown_id(ctx: CaseContext) -> None:
    need_tool_tasks(ctx)
    methods = ["tasks/get", "tasks/result"] + (["tasks/cancel"] if declares_tasks(ctx, "cancel") else [])
    wrong, calls = await not_refused_with(ctx, methods, -32602)
    ctx.note(f"asked {', '.join(methods)} for taskId {NO_SUCH_TASK!r}")
    if wrong:
        missed("an unknown taskId was not refused with -32602: " + "; ".join(wrong), **calls)


@check(
    "base.tasks.list",
    "BASE-TASK-010",
    "tasks/list lists the requestor's tasks in Task shape and refuses a cursor it never gave with -32602",
    revisions=("2025-11-25",),
)
async def list_tasks(ctx: CaseContext) -> None:
    if not declares_tasks(ctx, "list"):
        skip("the server does not declare tasks.list")
    run = await created(ctx)
    listing = await ctx.list_all("tasks/list", "tasks", refetch=True)
    problems = [p for i, t in enumerate(listing.items) for p in task_problems(t, f"tasks[{i}]")]
    evidence = {"first_page": listing.calls[0].excerpt(1000)} if listing.calls else {}
    if listing.calls and not isinstance(listing.calls[0].result, dict):
        missed("tasks/list was not answered with a result", **evidence)
    if problems:
        missed("tasks/list breaks the schema's ListTasksResult: " + "; ".join(problems[:5]), **evidence)
    ids = [t.get("taskId") for t in listing.items if isinstance(t, dict)]
    if run.task_id not in ids and not listing.problem:
        missed(
            f"the task {run.task_id!r}, retrievable with tasks/get, is not in tasks/list ({len(ids)} listed)",
            **evidence,
        )
    bogus = await ctx.request("tasks/list", {"cursor": NO_SUCH_CURSOR})
    ctx.note(
        f"listed {len(ids)} task(s) in {len(listing.calls)} page(s); "
        f"then tasks/list with cursor {NO_SUCH_CURSOR!r}"
    )
    if bogus.error_code != -32602:
        missed(
            f"tasks/list with a cursor the server never gave was answered with {_answer(bogus)}, not -32602",
            **bogus.excerpt(),
        )


@check(
    "base.tasks.forbidden-refused",
    "BASE-TASK-011",
    "a task-augmented call of a tool without taskSupport (forbidden) is refused with -32601",
    revisions=("2025-11-25",),
)
async def forbidden_refused(ctx: CaseContext) -> None:
    need_tool_tasks(ctx)
    sweep = await call_sweep(ctx)
    done = [t for t in sweep.tools if t.success is not None and task_support(t.tool) == "forbidden"]
    if not done:
        skip(
            'no tool without execution.taskSupport (or with "forbidden") '
            "was called successfully to repeat as a task"
        )
    entry = done[0]
    call = await call_tool(ctx, {"name": entry.name, "arguments": entry.arguments(), "task": TASK})
    ctx.note(
        f"repeated the successful call of {entry.name!r} (taskSupport forbidden) with params.task {TASK_TEXT}"
    )
    if call.error_code != -32601:
        result = call.result
        what = "a CreateTaskResult" if isinstance(result, dict) and "task" in result else _answer(call)
        missed(
            f"a task-augmented call of {entry.name!r}, whose taskSupport is forbidden, "
            f"was answered with {what}, not -32601",
            **call.excerpt(),
        )


@check(
    "base.tasks.required-plain",
    "BASE-TASK-012",
    "a plain (not task-augmented) call of a tool whose taskSupport is required is -32601",
    revisions=("2025-11-25",),
)
async def required_plain(ctx: CaseContext) -> None:
    need_tool_tasks(ctx)
    listed = [t for t in await tools(ctx) if task_support(t) == "required"]
    if not listed:
        skip('no listed tool has execution.taskSupport "required"')
    required = ctx.callable_tools(listed)
    if not required:
        # The reason is about these tools, not the others (which may well be read-only and called).
        why = no_callable_reason(ctx, listed)
        skip_tools_held_back(
            ctx, f'no tool whose execution.taskSupport is "required" may be called: {why}', listed
        )
    tool = required[0]
    arguments = await first_candidate(tool)
    if arguments is None:
        skip(f"no arguments could be built for {tool['name']!r} from its inputSchema")
    call = await call_tool(ctx, {"name": tool["name"], "arguments": arguments})
    ctx.note(f"called {tool['name']!r} (taskSupport required) without params.task")
    if call.error_code == -32601:
        return
    if call.error_code == -32600:
        weak(
            "the plain call of a task-required tool was refused with -32600, which the page's Error Handling "
            "allows for a request type that requires tasks, but its tool-level rule names -32601",
            **call.excerpt(),
        )
    what = _answer(call)
    missed(
        f"a plain call of {tool['name']!r}, whose taskSupport is required, "
        f"was answered with {what}, not -32601",
        **call.excerpt(),
    )


@check(
    "base.tasks.undeclared-methods",
    "BASE-TASK-013",
    "the tasks/* methods a server does not declare are answered with -32601",
    revisions=("2025-11-25",),
)
async def undeclared_methods(ctx: CaseContext) -> None:
    undeclared = [
        m
        for m in TASK_METHODS
        if not declares_tasks(ctx)
        or (m == "tasks/list" and not declares_tasks(ctx, "list"))
        or (m == "tasks/cancel" and not declares_tasks(ctx, "cancel"))
    ]
    if not undeclared:
        skip("the server declares every tasks method (tasks, tasks.list, tasks.cancel): each is its to serve")
    wrong, calls = await not_refused_with(ctx, undeclared, -32601)
    ctx.note("undeclared, asked: " + ", ".join(undeclared))
    if wrong:
        missed("an undeclared tasks method was not answered with -32601: " + "; ".join(wrong), **calls)


@check(
    "base.tasks.modern-removed",
    "BASE-TASK-014",
    "2026-07-28: tasks/result and tasks/list (removed), and tasks/* without the tasks extension, are -32601",
    revisions=("2026-07-28",),
)
async def modern_removed(ctx: CaseContext) -> None:
    extensions = ctx.identity.capabilities.get("extensions")
    extension = isinstance(extensions, dict) and MODERN_TASKS in extensions
    # With the extension declared, tasks/result is the tasks suite's TASKS-012 (the extension's own MUST):
    # asked here too it would be two verdicts for one defect.
    methods = ["tasks/list"] if extension else ["tasks/result", "tasks/list", "tasks/get", "tasks/cancel"]
    wrong, calls = await not_refused_with(ctx, methods, -32601)
    ctx.note(
        ("the server declares " + MODERN_TASKS if extension else "no tasks extension declared")
        + "; asked: "
        + ", ".join(methods)
    )
    if wrong:
        missed(
            "a tasks method 2026-07-28 does not have was not answered with -32601: " + "; ".join(wrong),
            **calls,
        )
