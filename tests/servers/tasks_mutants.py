"""Mutants of the tasks suite's reference server (the 2026-07-28 tasks extension, TASKS-*).

Each `--defect NAME` plants one fault in `conformance_reference.tasks_server.TaskExtension`; `none` is
the reference. `no-extension` (the extension not offered at all) and `never-task` (offered, but no call
ever made a task) are conformant too, for the rows that SKIP on such servers.

    python -m tests.servers.tasks_mutants --defect NAME [--http --port 0]
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from conformance_reference import tasks_server
from conformance_reference.handlers import JSON

DEFECTS = {
    "none": "conformant",
    "no-extension": "conformant: offers no tasks extension (no extension declared, no task)",
    "never-task": "conformant: declares the extension but answers every call at once",
    "legacy-capability": "server/discover also declares the 2025-11-25 capabilities.tasks",
    "create-no-result-type": 'the CreateTaskResult has resultType "complete", not "task"',
    "create-no-task-id": "the CreateTaskResult has no taskId",
    "not-durable": "the first tasks/get of each task answers -32602 (created after the answer)",
    "undeclared-task": "a creator tool answers with a task a request that does not declare the extension",
    "get-result-type-task": 'tasks/get answers resultType "task"',
    "terminal-flips": "the tasks/get after a terminal one reports the task working again",
    "completed-no-content": "a completed task's result is no CallToolResult (no content)",
    "update-answers-task": "tasks/update answers the task instead of an empty result",
    "cancel-answers-task": "tasks/cancel answers the task instead of an empty result (as in 2025-11-25)",
    "unknown-id-code": "an unknown taskId is -32600",
    "undeclared-served": "tasks/get, tasks/update and tasks/cancel are served without the extension declared",
    "result-served": "tasks/result is answered with a result",
    "listen-wrong-code": "subscriptions/listen for tasks without the extension is -32600, not -32021",
}


class Mutant(tasks_server.TaskExtension):
    def __init__(self, defect: str) -> None:
        super().__init__({} if defect == "never-task" else None)
        self.defect = defect
        self.looked: set[str] = set()
        self.terminal_seen: set[str] = set()

    def install(self, server: Server[Any]) -> None:
        super().install(server)
        if self.defect == "result-served":
            server.add_request_handler("tasks/result", types.RequestParams, self.result)

    async def result(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        return {}

    def capabilities(self, capabilities: JSON) -> JSON:
        if self.defect == "no-extension":
            return capabilities
        answer = super().capabilities(capabilities)
        if self.defect == "legacy-capability":
            answer["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
        return answer

    async def call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: JSON
    ) -> HandlerResult:
        if self.defect == "no-extension":
            return await call_next(ctx)
        if self.defect == "undeclared-task" and not tasks_server.declares_tasks(params):
            task = self.create(("result", {"content": [{"type": "text", "text": "done"}]}))
            return {"resultType": "task", **task.wire()}
        answer = await super().call(ctx, call_next, params)
        if not (isinstance(answer, dict) and answer.get("resultType") == "task"):
            return answer
        if self.defect == "create-no-result-type":
            answer["resultType"] = "complete"
        if self.defect == "create-no-task-id":
            answer.pop("taskId")
        return answer

    def listen(self, params: JSON) -> None:
        if self.defect == "listen-wrong-code":
            notifications = params.get("notifications")
            if isinstance(notifications, dict) and "taskIds" in notifications:
                raise MCPError(code=types.INVALID_REQUEST, message="Invalid request")
        super().listen(params)

    def gate(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if self.defect == "undeclared-served" and ctx.protocol_version == tasks_server.MODERN:
            return
        if self.defect == "no-extension":
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=ctx.method)
        super().gate(ctx)

    def find(self, ctx: ServerRequestContext[Any, Any]) -> tasks_server.Task:
        try:
            return super().find(ctx)
        except MCPError as exc:
            if self.defect == "unknown-id-code" and exc.error.code == types.INVALID_PARAMS:
                raise MCPError(code=types.INVALID_REQUEST, message=exc.error.message) from None
            raise

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        task = self.find(ctx)
        if self.defect == "not-durable" and task.task_id not in self.looked:
            self.looked.add(task.task_id)
            raise MCPError(code=types.INVALID_PARAMS, message="Failed to retrieve task: Task not found")
        answer = await super().get(ctx, params)
        if self.defect == "get-result-type-task":
            answer["resultType"] = "task"
        if self.defect == "terminal-flips" and answer["status"] in tasks_server.TERMINAL:
            if task.task_id in self.terminal_seen:
                answer["status"] = "working"
                answer.pop("result", None)
            self.terminal_seen.add(task.task_id)
        if self.defect == "completed-no-content" and answer["status"] == "completed":
            answer["result"] = {"text": "done"}
        return answer

    async def update(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        answer = await super().update(ctx, params)
        return self.find(ctx).wire() if self.defect == "update-answers-task" else answer

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        answer = await super().cancel(ctx, params)
        return self.find(ctx).wire() if self.defect == "cancel-answers-task" else answer


def main(argv: list[str]) -> int:
    defect = "none"
    if "--defect" in argv:
        at = argv.index("--defect")
        defect, argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    if defect not in DEFECTS:
        raise SystemExit(f"unknown defect {defect!r}")
    return tasks_server.main(argv, Mutant(defect))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
