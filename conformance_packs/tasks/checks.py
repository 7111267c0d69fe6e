"""The 2026-07-28 tasks extension (SEP-2663), judged by what a black-box client can observe.

Client capabilities travel on each request in 2026-07-28 (`_meta` clientCapabilities), so every request
here says itself whether it declares the extension: `declared=True` adds `io.modelcontextprotocol/tasks`
under `extensions`, `declared=False` sends the session's capabilities without it.

The server decides per request whether a tools/call becomes a task, so the rows find one: the tools
the `--call-tools` policy allows (at most MAX_TRIED) are called once each with the extension declared
(`sweep`, once per target and revision). The first task created is then followed (`followed`): tasks/get
at once, tasks/update with no responses, and tasks/get polled at the task's own interval until it is
terminal, plus one more. A server that never elects to create a task is compliant ("A server that
returns the standard CallToolResult shape ... remains fully spec-compliant"): the rows that need a task
SKIP saying so. A server that does not declare the extension has every row SKIP with one reason, and
nothing is sent.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    META_CLIENT_CAPABILITIES,
    MODERN_REVISIONS,
    Call,
    CaseContext,
    NotSent,
    blocked,
    check,
    drawing,
    jsonrpc,
    missed,
    skip,
    weak,
)

#: The extension's identifier (SEP-2663, Extension Identifier).
TASKS = "io.modelcontextprotocol/tasks"
#: The statuses of a Task, and the terminal three.
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = ("completed", "failed", "cancelled")
#: A task ID no server issued.
NO_SUCH_TASK = "conformance-no-such-task-7f3a9c"
#: The extension's methods on one task, each with the params it needs beside taskId.
METHODS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("tasks/get", {}),
    ("tasks/update", {"inputResponses": {}}),
    ("tasks/cancel", {}),
)
#: Tools called to find one that creates a task: a server's first few are enough to find one.
MAX_TRIED = 6
#: Polls of a task until it is terminal, and the wait bounds between two (the task's pollIntervalMs,
#: clamped): a long task is SKIP, never a long wait.
MAX_POLLS = 20
POLL_MIN_S = 0.05
POLL_MAX_S = 1.0
POLL_BUDGET_S = 10.0
#: The members an acknowledgment (tasks/update, tasks/cancel) may have: "an empty result".
ACK_MEMBERS = frozenset({"resultType", "_meta"})
NOT_OFFERED = (
    "the server does not offer the tasks extension: "
    f"server/discover's capabilities.extensions has no {TASKS!r}"
)


def offered(ctx: CaseContext) -> None:
    """SKIP, sending nothing, unless the server declares the extension."""
    extensions = ctx.identity.capabilities.get("extensions")
    if not (isinstance(extensions, dict) and TASKS in extensions):
        skip(NOT_OFFERED, kind="not-applicable")


async def ask(
    ctx: CaseContext,
    method: str,
    params: dict[str, Any],
    *,
    declared: bool = True,
    timeout: float | None = None,
) -> Call:
    """A request on the shared session that declares the extension in its own clientCapabilities, or
    (declared=False) says nothing of it; over Streamable HTTP a tasks/* request names its task in
    Mcp-Name, as SEP-2663's Routing Headers require of a client."""
    session = await ctx.session()
    capabilities = dict(session.client.capabilities)
    extensions = capabilities.get("extensions")
    others = {k: v for k, v in extensions.items() if k != TASKS} if isinstance(extensions, dict) else {}
    if declared:
        capabilities["extensions"] = {**others, TASKS: {}}
    elif others:
        capabilities["extensions"] = others
    else:
        capabilities.pop("extensions", None)
    body = {**params, "_meta": {META_CLIENT_CAPABILITIES: capabilities}}
    task_id = params.get("taskId")
    headers = {"Mcp-Name": task_id} if method.startswith("tasks/") and isinstance(task_id, str) else None
    return await ctx.request(method, body, headers=headers, timeout=timeout)


def is_task(result: Any) -> bool:
    """Whether a tools/call answer is a task: resultType "task", or what can only be a task with the
    discriminator wrong (a taskId and status without content, or the 2025-11-25 nested `task`)."""
    if not isinstance(result, dict):
        return False
    if result.get("resultType") == "task" or isinstance(result.get("task"), dict):
        return True
    return isinstance(result.get("taskId"), str) and "status" in result and "content" not in result


def task_problems(task: dict[str, Any], what: str) -> list[str]:
    """What `task` lacks of SEP-2663's Task."""
    out = []
    for key in ("taskId", "createdAt", "lastUpdatedAt"):
        if not isinstance(task.get(key), str):
            out.append(f"{what}.{key} is {'missing' if key not in task else 'not a string'}")
    if task.get("status") not in STATUSES:
        out.append(f"{what}.status {json.dumps(task.get('status'))} is not one of {', '.join(STATUSES)}")
    if "ttlMs" not in task:
        out.append(f"{what}.ttlMs is missing")
    elif task["ttlMs"] is not None and not _integer(task["ttlMs"]):
        out.append(f"{what}.ttlMs {json.dumps(task['ttlMs'])} is not an integer or null")
    if "pollIntervalMs" in task and not _integer(task["pollIntervalMs"]):
        out.append(f"{what}.pollIntervalMs {json.dumps(task['pollIntervalMs'])} is not an integer")
    if "statusMessage" in task and not isinstance(task["statusMessage"], str):
        out.append(f"{what}.statusMessage is not a string")
    return out


def _integer(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )


def status_of(call: Call | None) -> str | None:
    result = call.result if call is not None else None
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


def answer_of(call: Call) -> str:
    """What a call drew, in a few words."""
    if call.error is not None:
        return f"error {call.error_code}"
    if call.reply.response is None:
        return call.no_answer()
    return "a result"


def _extras(result: dict[str, Any]) -> list[str]:
    return sorted(set(result) - ACK_MEMBERS)


# ------------------------------------------------------------------------ the sweep and the followed task


@dataclass
class Attempt:
    """One tool called with the extension declared, and what it answered."""

    name: str
    arguments: dict[str, Any]
    call: Call


@dataclass
class Sweep:
    tried: list[Attempt] = field(default_factory=list)
    #: The calls answered with a task, in the order called.
    creators: list[Attempt] = field(default_factory=list)
    #: Why no call created a task (when none did).
    why: str = ""

    def said(self) -> str:
        names = ", ".join(repr(a.name) for a in self.tried) or "no tool"
        return f"called {names} with {TASKS} declared"


async def first_candidate(tool: dict[str, Any]) -> dict[str, Any] | None:
    text = await asyncio.to_thread(drawing(tool.get("inputSchema", {})).get, 0)
    return json.loads(text) if text is not None else None


async def sweep(ctx: CaseContext) -> Sweep:
    """The tools called with the extension declared (once per target and revision)."""
    offered(ctx)

    async def make() -> Sweep:
        found = Sweep()
        listing = await ctx.list_all("tools/list", "tools")
        listed = [t for t in listing.items if isinstance(t, dict) and isinstance(t.get("name"), str)]
        callable_ = ctx.callable_tools(listed)
        if not listed:
            found.why = "tools/list offers no tool"
            return found
        if not callable_:
            found.why = f"the --call-tools policy ({ctx.options.call_tools}) lets no listed tool be called"
            return found
        for tool in callable_[:MAX_TRIED]:
            arguments = await first_candidate(tool)
            if arguments is None:
                continue
            try:
                call = await ask(ctx, "tools/call", {"name": tool["name"], "arguments": arguments})
            except NotSent as exc:
                found.why = f"tools/call of {tool['name']!r} was {exc}"
                continue
            attempt = Attempt(tool["name"], arguments, call)
            found.tried.append(attempt)
            if is_task(call.result):
                found.creators.append(attempt)
        if not found.creators:
            found.why = found.why or (
                f"none of the {len(found.tried)} tool(s) called ({found.said()}) answered with a task; "
                "a server that never elects to create one is compliant"
            )
        return found

    return await ctx.remember_once("tasks-sweep", "calling tools with the tasks extension declared", make)


async def creator(ctx: CaseContext) -> Attempt:
    """The first call answered with a task; SKIP when none was."""
    found = await sweep(ctx)
    if not found.creators:
        skip(f"no task was created: {found.why}")
    ctx.note(f"{found.said()}; {found.creators[0].name!r} answered with a task")
    return found.creators[0]


@dataclass
class Followed:
    """The first task and what was asked of it."""

    attempt: Attempt
    task_id: str
    first_get: Call
    update: Call
    polls: list[Call] = field(default_factory=list)
    #: The first tasks/get that reported a terminal status, and the one after it.
    terminal: Call | None = None
    again: Call | None = None


async def followed(ctx: CaseContext) -> Followed:
    """The first task, followed; blocked by TASKS-002's case when its creation carried no taskId."""
    attempt = await creator(ctx)
    task_id = attempt.call.result.get("taskId")
    if not isinstance(task_id, str):
        blocked("tasks.create.result-type", f"the task {attempt.name!r} answered carries no string taskId")

    async def make() -> Followed:
        first = await ask(ctx, "tasks/get", {"taskId": task_id})
        update = await ask(ctx, "tasks/update", {"taskId": task_id, "inputResponses": {}})
        run = Followed(attempt, task_id, first, update)
        await poll(ctx, run)
        return run

    return await ctx.remember_once("tasks-followed", "following the created task", make)


async def poll(ctx: CaseContext, run: Followed) -> None:
    """tasks/get until terminal (bounded), then once more."""
    deadline = time.monotonic() + POLL_BUDGET_S
    call = run.first_get
    for _ in range(MAX_POLLS):
        if status_of(call) in TERMINAL:
            run.terminal = call
            run.again = await ask(ctx, "tasks/get", {"taskId": run.task_id})
            return
        if call.error is not None or time.monotonic() >= deadline:
            return
        interval = call.result.get("pollIntervalMs") if isinstance(call.result, dict) else None
        number = isinstance(interval, int | float) and not isinstance(interval, bool)
        wait = float(interval or 0) / 1000 if number else POLL_MIN_S
        # The task's own polling interval ("Clients SHOULD respect the pollIntervalMs"), bounded.
        await asyncio.sleep(min(max(wait, POLL_MIN_S), POLL_MAX_S))
        call = await ask(ctx, "tasks/get", {"taskId": run.task_id})
        run.polls.append(call)


def gets(run: Followed) -> list[Call]:
    return [run.first_get, *run.polls, *([run.again] if run.again is not None else [])]


async def terminal(ctx: CaseContext) -> Followed:
    """The followed task once it reported a terminal status: blocked by TASKS-003's case when its
    tasks/get was an error, SKIP when it stayed non-terminal within the polls (a long task breaks no
    rule)."""
    run = await followed(ctx)
    if run.terminal is None or run.again is None:
        last = gets(run)[-1]
        if last.error is not None:
            blocked(
                "tasks.create.durable", f"tasks/get of the task {run.task_id!r} drew error {last.error_code}"
            )
        skip(
            f"the task did not become terminal within {len(gets(run))} tasks/get (a long task breaks no rule)"
        )
    return run


# ------------------------------------------------------------------------------------------- the rows


def created_or_unknown(found: Sweep) -> tuple[str | None, str]:
    """The ID of the first task the sweep created (None when none was), and the ID to ask about: that
    one, else `NO_SUCH_TASK`."""
    created = found.creators[0].call.result.get("taskId") if found.creators else None
    created = created if isinstance(created, str) else None
    return created, created or NO_SUCH_TASK


@check(
    "tasks.capability.declared",
    "TASKS-001",
    "the extension is declared as an object under capabilities.extensions, without legacy capabilities.tasks",
    revisions=MODERN_REVISIONS,
)
async def capability_declared(ctx: CaseContext) -> None:
    offered(ctx)
    capabilities = ctx.identity.capabilities
    problems = []
    value = capabilities["extensions"][TASKS]
    if not isinstance(value, dict):
        problems.append(f"capabilities.extensions[{TASKS!r}] is {json.dumps(value)}, not an object")
    if "tasks" in capabilities:
        problems.append(
            "capabilities also has the legacy tasks declaration (tasks.requests, tasks.cancel, tasks.list)"
        )
    if problems:
        opening = ctx.identity.opening
        missed("; ".join(problems), **(opening.excerpt() if opening is not None else {}))


@check(
    "tasks.create.result-type",
    "TASKS-002",
    'a task is created as a result of resultType "task" that is a flat Task',
    revisions=MODERN_REVISIONS,
)
async def create_result_type(ctx: CaseContext) -> None:
    attempt = await creator(ctx)
    result = attempt.call.result
    problems = []
    if result.get("resultType") != "task":
        problems.append(f'resultType is {json.dumps(result.get("resultType"))}, not "task"')
    if "task" in result:
        problems.append("the task is nested under result.task (the 2025-11-25 CreateTaskResult), not flat")
    problems += task_problems(result, "result")
    if problems:
        missed(
            "the CreateTaskResult breaks SEP-2663's shape: " + "; ".join(problems), **attempt.call.excerpt()
        )


@check(
    "tasks.create.durable",
    "TASKS-003",
    "a created task is found by tasks/get at once",
    revisions=MODERN_REVISIONS,
)
async def create_durable(ctx: CaseContext) -> None:
    run = await followed(ctx)
    if run.first_get.error is not None or not isinstance(run.first_get.result, dict):
        missed(
            f"tasks/get of the task {run.task_id!r}, sent right after its CreateTaskResult, "
            f"drew {answer_of(run.first_get)}",
            **run.first_get.excerpt(),
        )


@check(
    "tasks.create.undeclared",
    "TASKS-004",
    "no task for a request that does not declare the extension; a refusal is -32021 naming it",
    revisions=MODERN_REVISIONS,
)
async def create_undeclared(ctx: CaseContext) -> None:
    await creator(ctx)
    found = await sweep(ctx)
    weak_note = ""
    for attempt in found.creators:
        call = await ask(
            ctx, "tools/call", {"name": attempt.name, "arguments": attempt.arguments}, declared=False
        )
        if is_task(call.result):
            missed(
                f"{attempt.name!r} answered with a task a request that did not declare {TASKS}",
                **call.excerpt(),
            )
        if call.error_code == jsonrpc.MISSING_CLIENT_CAPABILITY:
            if not _names_extension(call.error):
                missed(
                    "the -32021 refusal does not name the extension in "
                    f"data.requiredCapabilities.extensions[{TASKS!r}]",
                    **call.excerpt(),
                )
        elif call.error is not None and not weak_note:
            weak_note = f"{attempt.name!r} without the extension drew error {call.error_code}, not -32021"
            evidence = call.excerpt()
    ctx.note("called again without the extension: " + ", ".join(repr(a.name) for a in found.creators))
    if weak_note:
        weak(
            weak_note + " (the text asks -32021 when the server cannot serve the call without a task)",
            **evidence,
        )


def _names_extension(error: Any) -> bool:
    data = error.get("data") if isinstance(error, dict) else None
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS in extensions


@check(
    "tasks.get.shape",
    "TASKS-005",
    'tasks/get answers the task with resultType "complete" and the payload of its status',
    revisions=MODERN_REVISIONS,
)
async def get_shape(ctx: CaseContext) -> None:
    run = await followed(ctx)
    answered = [c for c in gets(run) if isinstance(c.result, dict)]
    if not answered:
        blocked("tasks.create.durable", f"tasks/get of the task {run.task_id!r} answered no result")
    payload = {"input_required": "inputRequests", "completed": "result", "failed": "error"}
    for call in answered:
        result = call.result
        problems = []
        if result.get("resultType") != "complete":
            problems.append(f'resultType is {json.dumps(result.get("resultType"))}, not "complete"')
        if result.get("taskId") != run.task_id:
            problems.append(f"taskId {json.dumps(result.get('taskId'))} is not the task asked for")
        problems += task_problems(result, "result")
        member = payload.get(str(result.get("status")))
        if member is not None and not isinstance(result.get(member), dict):
            problems.append(f"a {result['status']} task has no object {member}")
        if problems:
            missed(
                "the tasks/get answer breaks SEP-2663's DetailedTask: " + "; ".join(problems),
                **call.excerpt(),
            )
    ctx.note("statuses seen: " + ", ".join(str(status_of(c)) for c in answered))


@check(
    "tasks.get.terminal-kept",
    "TASKS-006",
    "a terminal task keeps its status",
    revisions=MODERN_REVISIONS,
)
async def terminal_kept(ctx: CaseContext) -> None:
    run = await terminal(ctx)
    assert run.terminal is not None and run.again is not None
    first, then = status_of(run.terminal), status_of(run.again)
    ctx.note(f"terminal {first!r}, then {then!r}")
    if then != first:
        missed(
            f"the task was {first!r} (terminal) and the next tasks/get reports {json.dumps(then)}",
            terminal=run.terminal.excerpt(600),
            next=run.again.excerpt(600),
        )


@check(
    "tasks.get.terminal-payload",
    "TASKS-007",
    "a terminal task carries what the tools/call would have returned",
    revisions=MODERN_REVISIONS,
)
async def terminal_payload(ctx: CaseContext) -> None:
    run = await terminal(ctx)
    call = run.terminal
    assert call is not None
    status, result = status_of(call), call.result
    ctx.note(f"the task ended {status!r}")
    if status == "completed":
        body = result.get("result")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, list) or not all(
            isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
        ):
            missed(
                "the completed task's result is not a CallToolResult (no content array of typed blocks)",
                **call.excerpt(),
            )
    elif status == "failed":
        error = result.get("error")
        if not (
            isinstance(error, dict) and _integer(error.get("code")) and isinstance(error.get("message"), str)
        ):
            missed(
                "the failed task's error is not a JSON-RPC error (an integer code and a string message); "
                "failed is for JSON-RPC errors only",
                **call.excerpt(),
            )
    else:
        skip(f"the task ended {status!r}: it carries no result to judge")


@check(
    "tasks.update.ack",
    "TASKS-008",
    'tasks/update is acknowledged with an empty result of resultType "complete"',
    revisions=MODERN_REVISIONS,
)
async def update_ack(ctx: CaseContext) -> None:
    run = await followed(ctx)
    call = run.update
    ctx.note(f"tasks/update of the task {run.task_id!r} with inputResponses {{}}")
    if call.error is not None or not isinstance(call.result, dict):
        weak(
            f"tasks/update with no responses drew {answer_of(call)}, not an acknowledgment", **call.excerpt()
        )
    _judge_ack(call, "tasks/update")


def _judge_ack(call: Call, method: str) -> None:
    result = call.result
    problems = []
    if result.get("resultType") != "complete":
        problems.append(f'resultType is {json.dumps(result.get("resultType"))}, not "complete"')
    if _extras(result):
        problems.append("it is not empty: it has " + ", ".join(_extras(result)))
    if problems:
        missed(f"the {method} acknowledgment breaks SEP-2663: " + "; ".join(problems), **call.excerpt())


@check(
    "tasks.cancel.ack",
    "TASKS-009",
    'tasks/cancel is acknowledged with an empty result of resultType "complete"',
    revisions=MODERN_REVISIONS,
)
async def cancel_ack(ctx: CaseContext) -> None:
    attempt = await creator(ctx)
    try:
        create = await ask(ctx, "tools/call", {"name": attempt.name, "arguments": attempt.arguments})
    except NotSent as exc:
        skip(f"tools/call of {attempt.name!r} was {exc}")
    if not is_task(create.result):
        skip(f"a second call of {attempt.name!r} created no task to cancel")
    task_id = create.result.get("taskId")
    if not isinstance(task_id, str):
        blocked("tasks.create.result-type", f"the second task of {attempt.name!r} carries no string taskId")
    call = await ask(ctx, "tasks/cancel", {"taskId": task_id})
    after = await ask(ctx, "tasks/get", {"taskId": task_id})
    ctx.note(
        f"called {attempt.name!r} again and cancelled its task at once; "
        f"tasks/get then: {answer_of(after)} ({status_of(after)})"
    )
    if call.error is not None or not isinstance(call.result, dict):
        missed(
            f"tasks/cancel of a task just created drew {answer_of(call)}, not an acknowledgment",
            **call.excerpt(),
        )
    _judge_ack(call, "tasks/cancel")


@check(
    "tasks.errors.unknown-id",
    "TASKS-010",
    "an unknown taskId is -32602 (tasks/get MUST; tasks/update and tasks/cancel SHOULD)",
    revisions=MODERN_REVISIONS,
)
async def unknown_id(ctx: CaseContext) -> None:
    offered(ctx)
    calls = {}
    wrong_get = None
    for method, extra in METHODS:
        call = await ask(ctx, method, {"taskId": NO_SUCH_TASK, **extra})
        calls[method.replace("/", "_")] = call.excerpt(600)
        if call.error_code == jsonrpc.INVALID_PARAMS:
            continue
        if method == "tasks/get":
            wrong_get = f"tasks/get of an unknown taskId drew {answer_of(call)}, not -32602"
        else:
            ctx.miss_should(f"{method} of an unknown taskId drew {answer_of(call)}, not -32602")
    ctx.note(f"asked tasks/get, tasks/update and tasks/cancel for taskId {NO_SUCH_TASK!r}")
    if wrong_get:
        missed(wrong_get, **calls)


@check(
    "tasks.errors.undeclared-methods",
    "TASKS-011",
    "tasks/get, tasks/update and tasks/cancel from a request that does not declare the extension are -32021",
    revisions=MODERN_REVISIONS,
)
async def undeclared_methods(ctx: CaseContext) -> None:
    offered(ctx)
    found = await sweep(ctx)
    created, task_id = created_or_unknown(found)
    wrong, unsure, calls = [], [], {}
    for method, extra in METHODS:
        call = await ask(ctx, method, {"taskId": task_id, **extra}, declared=False)
        calls[method.replace("/", "_")] = call.excerpt(600)
        if call.error_code == jsonrpc.MISSING_CLIENT_CAPABILITY:
            data = call.error.get("data") if isinstance(call.error, dict) else None
            if not (isinstance(data, dict) and isinstance(data.get("requiredCapabilities"), dict)):
                wrong.append(f"{method}: -32021 without data.requiredCapabilities")
        elif call.error_code == jsonrpc.INVALID_PARAMS and task_id == NO_SUCH_TASK:
            unsure.append(f"{method}: -32602")
        else:
            wrong.append(f"{method}: {answer_of(call)}")
    ctx.note(
        f"without the extension, for {'the created task' if created else 'an unknown taskId'} {task_id!r}"
    )
    if wrong:
        missed(
            "a tasks method from a request without the extension was not refused with -32021: "
            + "; ".join(wrong),
            **calls,
        )
    if unsure:
        weak(
            "for an unknown taskId, without the extension: "
            + "; ".join(unsure)
            + " (the server may have looked the ID up first; the text fixes no order)",
            **calls,
        )


@check(
    "tasks.errors.result-removed",
    "TASKS-012",
    "tasks/result, removed by the extension, is -32601",
    revisions=MODERN_REVISIONS,
)
async def result_removed(ctx: CaseContext) -> None:
    offered(ctx)
    call = await ask(ctx, "tasks/result", {"taskId": NO_SUCH_TASK})
    if call.error_code != jsonrpc.METHOD_NOT_FOUND:
        missed(f"tasks/result drew {answer_of(call)}, not -32601", **call.excerpt())


@check(
    "tasks.notify.listen-undeclared",
    "TASKS-013",
    "subscriptions/listen for task notifications without the extension declared is -32021",
    revisions=MODERN_REVISIONS,
)
async def listen_undeclared(ctx: CaseContext) -> None:
    offered(ctx)
    found = await sweep(ctx)
    _, task_id = created_or_unknown(found)
    with ctx.answer_judged(
        "subscriptions/listen for task notifications without the extension was not refused"
    ):
        call = await ask(
            ctx, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, declared=False
        )
    ctx.note(f"subscriptions/listen for taskIds [{task_id!r}] without the extension")
    if call.error_code == jsonrpc.METHOD_NOT_FOUND:
        skip("the server serves no subscriptions/listen (-32601): it sends task notifications to no one")
    if call.error_code != jsonrpc.MISSING_CLIENT_CAPABILITY:
        ctx.session_broken()
        missed(
            "subscriptions/listen for task notifications without the extension "
            f"drew {answer_of(call)}, not -32021",
            **call.excerpt(),
        )
    data = call.error.get("data") if isinstance(call.error, dict) else None
    if not (isinstance(data, dict) and isinstance(data.get("requiredCapabilities"), dict)):
        missed("the -32021 refusal has no data.requiredCapabilities", **call.excerpt())
