"""Mutants of the reference server's tasks (2025-11-25 basic/utilities/tasks, BASE-TASK-*).

Each `--defect NAME` plants one fault in `conformance_reference.base_tasks.TaskSupport` (conformant
with `none`, whose `now` tool also requires tasks, so BASE-TASK-012 is judged). `no-tasks` is the
reference with no tasks at all: conformant too, for the rows of a server that declares none.

    python -m tests.servers.base_tasks_mutants --defect NAME [--http --port 0]
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from conformance_reference import base_server
from conformance_reference.base_tasks import TaskSupport
from conformance_reference.handlers import JSON

#: The reference's tool support, with `now` required (the reference requires none).
SUPPORT = {**base_server.TASK_SUPPORT, "now": "required"}

DEFECTS = {
    "none": "conformant",
    "no-tasks": "conformant, declares no tasks (the reference without them)",
    "create-completed": "the CreateTaskResult's task begins 'completed', not 'working'",
    "get-no-ttl": "tasks/get answers without ttl",
    "terminal-flips": "the third tasks/get of a task reports it 'working' again",
    "result-error": "tasks/result of a completed task answers -32603",
    "no-related-task": "tasks/result's result has no io.modelcontextprotocol/related-task _meta",
    "cancel-terminal-ok": "tasks/cancel of a terminal task answers the task unchanged",
    "cancel-not-kept": "a cancelled task completes after all",
    "unknown-id-code": "an unknown taskId is answered with -32600",
    "list-empty": "tasks/list lists no task",
    "forbidden-accepted": "a task-augmented call of a tool without taskSupport is processed normally",
    "required-plain-ok": "a plain call of a tool whose taskSupport is required is processed normally",
    "undeclared-list": "declares no tasks.list, but answers tasks/list",
    "modern-served": "answers tasks/list in 2026-07-28 with a result",
    "undeclared-refused": "declares no tasks, and refuses a task-augmented tools/call with -32603 (as the"
    " TypeScript SDK 1.32 does)",
}


async def refuse_augmented(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """The TypeScript SDK's answer to a task-augmented call on a server without tasks (its
    `assertToolsCallTaskCapability`): -32603, where 2025-11-25 says to process the call normally."""
    params = ctx.params if isinstance(ctx.params, dict) else {}
    if ctx.method == "tools/call" and "task" in params:
        raise MCPError(
            code=types.INTERNAL_ERROR,
            message="Server does not support task creation (required for tools/call)",
        )
    return await call_next(ctx)


class Mutant(TaskSupport):
    def __init__(self, defect: str) -> None:
        super().__init__(SUPPORT)
        self.defect = defect
        self.gets: dict[str, int] = {}

    def capability(self) -> JSON:
        caps = super().capability()
        if self.defect == "undeclared-list":
            caps.pop("list")
        return caps

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "tools/call" and ctx.protocol_version == "2025-11-25":
            support = self.support.get(params.get("name", ""))
            if self.defect == "forbidden-accepted" and support is None and "task" in params:
                return await call_next(ctx)
            if self.defect == "required-plain-ok" and support == "required" and "task" not in params:
                return await call_next(ctx)
        answer = await super().middleware(ctx, call_next)
        if self.defect == "create-completed" and isinstance(answer, dict) and "task" in answer:
            answer["task"]["status"] = "completed"
        return answer

    def _gate(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if self.defect == "modern-served" and ctx.method == "tasks/list":
            return
        super()._gate(ctx)

    def _find(self, ctx: ServerRequestContext[Any, Any]) -> Any:
        try:
            return super()._find(ctx)
        except MCPError as exc:
            if self.defect == "unknown-id-code" and exc.error.code == types.INVALID_PARAMS:
                raise MCPError(code=types.INVALID_REQUEST, message=exc.error.message) from None
            raise

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        answer = await super().get(ctx, params)
        task = self.tasks[answer["taskId"]]
        self.gets[task.task_id] = count = self.gets.get(task.task_id, 0) + 1
        if self.defect == "get-no-ttl":
            answer.pop("ttl")
        if self.defect == "terminal-flips" and count == 3:
            answer["status"] = "working"
        if self.defect == "cancel-not-kept" and task.status == "cancelled":
            task.move("completed")
            answer = task.wire()
        return answer

    async def result(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        answer = await super().result(ctx, params)
        if self.defect == "result-error":
            raise MCPError(code=types.INTERNAL_ERROR, message="Internal error")
        if self.defect == "no-related-task":
            answer.pop("_meta")
        return answer

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        answer = await super().list(ctx, params)
        return {"tasks": []} if self.defect == "list-empty" else answer

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        if self.defect == "cancel-terminal-ok":
            self._gate(ctx)
            task = self._find(ctx)
            if task.status in ("completed", "failed", "cancelled"):
                return task.wire()
        return await super().cancel(ctx, params)


def main(argv: list[str]) -> int:
    defect = "none"
    if "--defect" in argv:
        at = argv.index("--defect")
        defect, argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    if defect not in DEFECTS:
        raise SystemExit(f"unknown defect {defect!r}")
    build = base_server.build_server

    def build_with(**kwargs: Any) -> Any:
        if defect == "no-tasks":
            return build(**kwargs, task_support=False)
        if defect == "undeclared-refused":
            server = build(**kwargs, task_support=False)
            server.middleware.append(refuse_augmented)
            return server
        return build(**kwargs, tasks=Mutant(defect))

    base_server.build_server = build_with
    return base_server.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
