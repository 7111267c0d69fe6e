"""Every message the server sent in a revision, judged against its method's shape in that revision.

These checks send nothing: they read the whole wire log the revision's other cases left (`last=True`
runs them after those cases), so a fault in any answer, notification or server request is found,
whichever case drew it, and named by its JSON pointer.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, check, missed, shape_errors, skip
from conformance_packs.base.wirelog import Seen, excerpt, read_log

#: The shape (a definition of the project's shape file) of each method's result; a method not here,
#: or whose shape the file lacks, is held to the generic result shape of its revision.
RESULT_SHAPES = {
    "initialize": "initializeResult",
    "server/discover": "discoverResult",
    "tools/list": "listToolsResult",
    "tools/call": "callToolResult",
    "resources/list": "listResourcesResult",
    "resources/templates/list": "listResourceTemplatesResult",
    "resources/read": "readResourceResult",
    "prompts/list": "listPromptsResult",
    "prompts/get": "getPromptResult",
    "completion/complete": "completeResult",
}
#: The shape of each server notification's params.
NOTIFICATION_SHAPES = {
    "notifications/message": "loggingMessageParams",
    "notifications/progress": "progressParams",
    "notifications/resources/updated": "resourceUpdatedParams",
    "notifications/cancelled": "cancelledParams",
}
#: Error shapes by code, where a revision defines one (2026-07-28: -32021 lists what is missing).
ERROR_SHAPES: dict[Any, str] = {-32021: "missingCapabilityError"}
#: Faults shown in one verdict; the count says how many there were.
SHOWN = 5
#: Error codes 2026-07-28 defines in the range it reserves (-32020 to -32099), from its schema.
MODERN_CODES = frozenset({-32020, -32021, -32022})
#: Codes of earlier revisions 2026-07-28 says its implementations MUST NOT emit.
RETIRED_CODES = {-32002: "resource not found (2025-11-25 and earlier)", -32042: "URL elicitation required"}


def _defined(definition: str, revision: str) -> str | None:
    """The definition's shape in `revision`, or None when the shape file has no such definition."""
    from conformance.pack_api import SHAPES_ID, schema, shape_name

    name = shape_name(definition, revision)
    return name if name in schema(SHAPES_ID)["$defs"] else None


def _shape(definition: str, value: Any, revision: str, at: str) -> list[str]:
    if _defined(definition, revision) is None:
        definition = "result"
    return [_under(at, line) for line in shape_errors(definition, value, revision)]


def _under(at: str, line: str) -> str:
    """A `pointer: message` line of a shape error, its pointer moved under `at` (the member judged)."""
    return at + line[1:] if line.startswith("/:") else at + line


def _envelope(seen: Seen) -> list[str]:
    """What makes a message no JSON-RPC 2.0 message of the kind it claims to be."""
    message = seen.message
    if seen.kind == "invalid":
        return [f"{seen.pointer}: not a JSON-RPC request, notification or response"]
    problems = []
    if message.get("jsonrpc") != "2.0":
        problems.append(f'{seen.pointer}/jsonrpc: must be "2.0", got {message.get("jsonrpc", "(absent)")!r}')
    if seen.kind == "request" and (
        not isinstance(message["id"], (str, int)) or isinstance(message["id"], bool)
    ):
        problems.append(f"{seen.pointer}/id: a request id must be a string or an integer")
    if seen.kind == "response" and "result" in message and "error" in message:
        problems.append(f"{seen.pointer}: a response must not carry both result and error")
    return problems


def _task_answer(seen: Seen) -> bool:
    """A result with `task` answering a request sent with params.task (a CreateTaskResult)."""
    result = seen.message.get("result")
    return (
        isinstance(seen.params, dict)
        and "task" in seen.params
        and isinstance(result, dict)
        and "task" in result
    )


def judge(seen: Seen, revision: str) -> list[str]:
    """Every fault of one message, each as `pointer: what` (the pointer into the message)."""
    problems = _envelope(seen)
    if seen.kind == "invalid":
        return problems
    message, at = seen.message, seen.pointer
    if seen.kind == "response" and "result" in message and message.get("id") is None:
        # JSON-RPC 2.0 §5: a response's id is REQUIRED, null only when the request's id could not be
        # read (an error); every revision's result response requires it.
        problems.append(f"{at}: a result response must carry the id of the request it answers")
    # An error without an id (the schema required one until 2025-11-25) is left to the row of what it
    # answered: sent to a notification, it is BASE-NOTIF-001's one FAIL.
    if seen.kind == "response" and "error" in message:
        error = message["error"]
        shape = ERROR_SHAPES.get(error.get("code")) if isinstance(error, dict) else None
        shape = shape if shape and _defined(shape, revision) else "error"
        problems += [_under(f"{at}/error", line) for line in shape_errors(shape, error, revision)]
    elif seen.kind == "response":
        shape = RESULT_SHAPES.get(seen.method or "", "result")
        if isinstance(message["result"], dict) and message["result"].get("resultType") == "input_required":
            # 2026-07-28: a request the server needs input for is answered with an InputRequiredResult,
            # not its method's result; its own rules are the input rows' (BASE-INPUT-*).
            shape = "result"
        if _task_answer(seen):
            # 2025-11-25: a task-augmented request is answered with a CreateTaskResult, not its method's
            # result; the tasks rows judge it (BASE-TASK-001, -002).
            shape = "result"
        problems += _shape(shape, message["result"], revision, f"{at}/result")
    elif "params" in message:
        shape = NOTIFICATION_SHAPES.get(message["method"], "notificationParams")
        if seen.kind == "request":
            shape = "notificationParams"  # a request's params: an object, whatever its method
        problems += _shape(shape, message["params"], revision, f"{at}/params")
    return problems


def _shown(seen: Seen, line: str) -> str:
    """One fault as `message N (method) at /pointer: what` (no `at` for the message as a whole)."""
    pointer, _, what = line.partition(": ")
    where = f" at {pointer}" if pointer else ""
    return f"message {seen.entry} ({seen.method or seen.kind}){where}: {what}"


def _revision_messages(ctx: CaseContext) -> tuple[list[dict[str, Any]], list[Seen]]:
    entries, seen = read_log(ctx)
    if not seen:
        skip("the server sent no JSON-RPC message in this revision's exchanges")
    return entries, seen


@check(
    "base.wire.message-shapes",
    "BASE-WIRE-001",
    "every message the server sent has its method's shape",
    last=True,
)
async def message_shapes(ctx: CaseContext) -> None:
    entries, seen = _revision_messages(ctx)
    faults: list[tuple[Seen, str]] = []
    for item in seen:
        faults += [(item, line) for line in judge(item, ctx.revision)]
    unmatched = sum(1 for s in seen if s.kind == "response" and s.method is None and "result" in s.message)
    kinds = {k: sum(1 for s in seen if s.kind == k) for k in ("response", "notification", "request")}
    ctx.note(
        f"{len(seen)} server messages judged ({kinds['response']} responses, {kinds['notification']}"
        f" notifications, {kinds['request']} requests)"
        + (
            f"; {unmatched} results matched to no single method, judged by the generic shape"
            if unmatched
            else ""
        )
    )
    if faults:
        first = faults[0][0]
        lines = [_shown(s, line) for s, line in faults[:SHOWN]]
        more = f" (and {len(faults) - SHOWN} more)" if len(faults) > SHOWN else ""
        missed(f"{len(faults)} shape fault(s): " + "; ".join(lines) + more, **excerpt(entries, first))


@check(
    "base.wire.error-codes",
    "BASE-WIRE-002",
    "no error code 2026-07-28 reserves or retired",
    eras=("modern",),
    last=True,
)
async def error_codes(ctx: CaseContext) -> None:
    entries, seen = _revision_messages(ctx)
    errors = [s for s in seen if s.kind == "response" and isinstance(s.message.get("error"), dict)]
    if not errors:
        skip("the server answered no request with an error in this revision's exchanges")
    for item in errors:
        code = item.message["error"].get("code")
        if isinstance(code, bool) or not isinstance(code, int):
            continue  # the error shape's fault, judged by BASE-WIRE-001
        if code in RETIRED_CODES:
            missed(
                f"message {item.entry}: error code {code} ({RETIRED_CODES[code]}), which 2026-07-28"
                f" implementations must not emit, answered {item.method or 'a request'}",
                **excerpt(entries, item),
            )
        if -32099 <= code <= -32020 and code not in MODERN_CODES:
            missed(
                f"message {item.entry}: error code {code} is in the range 2026-07-28 reserves for codes it"
                f" defines (-32020 to -32099), and it defines no such code",
                **excerpt(entries, item),
            )
    ctx.note(f"{len(errors)} error responses judged")


@check(
    "base.wire.server-info-meta",
    "BASE-WIRE-003",
    "results name the server in _meta",
    eras=("modern",),
    last=True,
)
async def server_info_meta(ctx: CaseContext) -> None:
    entries, seen = _revision_messages(ctx)
    results = [s for s in seen if s.kind == "response" and isinstance(s.message.get("result"), dict)]
    if not results:
        skip("the server answered no request with a result in this revision's exchanges")
    lacking = [
        s
        for s in results
        if not isinstance(
            (s.message["result"].get("_meta") or {}).get("io.modelcontextprotocol/serverInfo"), dict
        )
    ]
    ctx.note(f"{len(results)} results judged")
    if lacking:
        methods = sorted({s.method or "?" for s in lacking})
        missed(
            f"{len(lacking)} of {len(results)} results carry no io.modelcontextprotocol/serverInfo in _meta"
            f" (answers to {', '.join(methods)})",
            **excerpt(entries, lacking[0]),
        )
