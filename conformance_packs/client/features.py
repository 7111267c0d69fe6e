"""The client's features, in the harness's own scenarios: what it declared it does (sampling, roots,
elicitation in form and URL mode), asked of it by the scenario server and its answers judged against
the revision's published schema; roots as `file://` URIs; and a changed tool list listed again."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import ClientContext, client_check, missed, skip, weak
from conformance_packs.client import plus_scenarios
from conformance_packs.client.common import shape
from conformance_packs.client.plus_common import LEGACY, plus_shape

SCENARIO = "x-features"
METHOD_NOT_FOUND = -32601


def _answer(ctx: ClientContext, feature: str, declaration: str) -> dict[str, Any]:
    """The client's result for the scenario's request of `feature`; SKIP when the client declared no
    `declaration`; WARN when it refused the method it declared; SKIP when it refused the request with an
    error of its own (the user's right, and no result to judge); FAIL when the answer is neither a result
    object nor an error object (JSON-RPC: "Either the result member or error member MUST be included";
    the revision's schema makes each of these results an object)."""
    ctx.needs("tools/call", "call use_features")
    asked = ctx.recording.facts.get("asked")
    if asked is None:
        ctx.absent("the tool call never reached its requests")
    answer = asked.get(feature)
    if answer is None:
        skip(f"the client declared no {declaration}, so the scenario asked none of it")
    error = answer.get("error")
    if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
        weak(
            f"the client declared {declaration}, then answered its request with method not found",
            response=answer,
        )
    if "error" in answer:
        if not (isinstance(error, dict) and isinstance(error.get("code"), int) and "message" in error):
            missed(
                f"the client answered the {feature} request with a malformed error: {error!r}",
                response=answer,
            )
        skip(f"the client refused the {feature} request (the user's right): {error!r}; no result to judge")
    if "result" not in answer and ctx.transport == "stdio":
        # no JSON-RPC message at all: over stdio CLIENT-HYG-003 judges such a line (one defect, one verdict)
        skip(
            f"the client's answer to the {feature} request is no JSON-RPC response (CLIENT-HYG-003 judges it)"
        )
    if not isinstance(answer.get("result"), dict):
        missed(
            f"the client answered the {feature} request with neither a result object nor an error",
            response=answer,
        )
    result: dict[str, Any] = answer["result"]
    return result


def _shaped(problems: list[str], what: str, result: dict[str, Any]) -> None:
    if problems:
        missed(f"the {what} does not match the schema: " + "; ".join(problems), result=result)


@client_check(
    "client.features.sampling",
    "CLIENT-FEAT-001",
    "a client that declared sampling answers sampling/createMessage with a CreateMessageResult",
    scenario=SCENARIO,
    revisions=LEGACY,
)
async def sampling(ctx: ClientContext) -> None:
    result = _answer(ctx, "sampling", "sampling")
    if result:
        _shaped(plus_shape("createMessageResult", result), "sampling/createMessage result", result)


@client_check(
    "client.features.roots",
    "CLIENT-FEAT-002",
    "a client that declared roots answers roots/list with file:// roots",
    scenario=SCENARIO,
    revisions=LEGACY,
)
async def roots(ctx: ClientContext) -> None:
    result = _answer(ctx, "roots", "roots")
    if not result:
        return
    _shaped(plus_shape("listRootsResult", result), "roots/list result", result)
    for root in result["roots"]:
        if not root["uri"].startswith("file://"):
            missed(f"the root {root['uri']!r} is no file:// URI", result=result)


@client_check(
    "client.features.elicitation-form",
    "CLIENT-FEAT-003",
    "a client that declared elicitation (form mode) answers a form with an ElicitResult",
    scenario=SCENARIO,
    revisions=plus_scenarios.ELICITATION,
)
async def elicitation_form(ctx: ClientContext) -> None:
    result = _answer(ctx, "form", "elicitation (form mode)")
    if result:
        _shaped(shape("elicitResult", result), "form elicitation's result", result)


@client_check(
    "client.features.elicitation-url",
    "CLIENT-FEAT-004",
    "a client that declared elicitation.url answers a URL-mode request with an ElicitResult",
    scenario=SCENARIO,
    revisions=plus_scenarios.URL_MODE,
)
async def elicitation_url(ctx: ClientContext) -> None:
    result = _answer(ctx, "url", "elicitation.url")
    if not result:
        return
    _shaped(shape("elicitResult", result), "URL elicitation's result", result)
    if "content" in result:
        ctx.soft_warn("the URL-mode answer carries content, which the schema says is omitted out of band")


@client_check(
    "client.features.tools-list-changed",
    "CLIENT-LIST-001",
    "after notifications/tools/list_changed the client lists the tools again",
    scenario="x-list-changed",
    revisions=LEGACY,
)
async def tools_list_changed(ctx: ClientContext) -> None:
    changed = ctx.recording.marks.get("list-changed")
    if changed is None:
        ctx.needs("tools/call", "call change_tools")
        ctx.absent("the scenario never said the tool list changed")
    if not [m for m in ctx.requests("tools/list") if m.arrival.t >= changed]:
        ctx.unless_failed("the client sent no tools/list after the notification")
        missed("the client did not list the tools again after notifications/tools/list_changed")


def _task_answers(ctx: ClientContext) -> dict[str, Any]:
    ctx.needs("tools/call", "call use_tasks")
    answers = ctx.recording.facts.get("tasks")
    if answers is None:
        ctx.absent("the tool call never reached its requests")
    if not answers:
        skip("the client declared no task-augmented sampling (tasks.requests.sampling.createMessage)")
    return dict(answers)


@client_check(
    "client.features.tasks",
    "CLIENT-FEAT-005",
    "a client that declared task-augmented sampling answers with a task, its state and its result",
    scenario="x-tasks",
    revisions=plus_scenarios.TASKS,
    transports=("http", "stdio"),
)
async def tasks(ctx: ClientContext) -> None:
    answers = _task_answers(ctx)
    wanted = (
        ("created", "createTaskResult", "task-augmented sampling/createMessage"),
        ("got", "task", "tasks/get"),
        ("result", "createMessageResult", "tasks/result"),
    )
    for key, definition, what in wanted:
        answer = answers.get(key)
        if answer is None:
            missed(f"the client's answer to {what} gave no task to ask further about", answers=answers)
        error = answer.get("error")
        if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
            weak(
                f"the client declared task-augmented sampling, then refused {what} as not found",
                response=answer,
            )
        result = answer.get("result")
        if not isinstance(result, dict):
            if key == "created":  # refused at once: no task, nothing judged
                skip(f"the client refused {what} (the user's right): {error!r}; no task to judge")
            ctx.note(f"the client refused {what}: {error!r}")
            return
        _shaped(plus_shape(definition, result), f"{what} result", result)
