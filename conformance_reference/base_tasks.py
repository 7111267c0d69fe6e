"""Tasks (MCP 2025-11-25 basic/utilities/tasks) for the base reference server's tools/call.

Why a middleware and not handlers alone: the `mcp` SDK 2.3.0 has the task types but no task store,
and its tools/call path validates every result as a CallToolResult, so a CreateTaskResult can only
leave through a middleware that answers the task-augmented call itself (the SDK trusts a result a
middleware returns). The tasks/* methods are no spec methods to the SDK, so they are ordinary
request handlers registered by name. Everything here is 2025-11-25 only: tasks came in with it, and
2026-07-28 moved them out into an extension this server does not offer, so there every tasks/*
method is -32601 as for any method the server does not serve.

The store is in memory, one per server process, bounded (a task is forgotten once its ttl has
elapsed, the oldest when MAX_TASKS are kept), each task bound to the session that created it (the
requestor this server can identify: a task of another session is "not found", and tasks/list lists
the session's own). A task runs its tool when it is created, shows `working` in the CreateTaskResult
and reaches its terminal status when it is next looked at (tasks/get, tasks/result, tasks/list), so
a tasks/cancel sent first finds it still working, as a long tool would be.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from conformance_reference.handlers import JSON, clip, paginate

__all__ = ["TASKS_REVISION", "TaskSupport"]

TASKS_REVISION: Final = "2025-11-25"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
#: What a task is kept for when the request names no ttl, and the most it may ask for (milliseconds).
DEFAULT_TTL_MS: Final = 60_000
MAX_TTL_MS: Final = 3_600_000
POLL_INTERVAL_MS: Final = 100
#: The most tasks the store keeps: past it the oldest is forgotten, as one past its ttl is.
MAX_TASKS: Final = 1024


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Task:
    task_id: str
    owner: str
    ttl: int
    #: The answer the tools/call would have had: ("result", result) or ("error", error object).
    outcome: tuple[str, JSON]
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    last_updated_at: str = ""
    #: When the receiver may forget the task (monotonic seconds): its ttl counted from creation.
    expires: float = 0.0

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at
        self.expires = time.monotonic() + self.ttl / 1000

    def settle(self) -> None:
        """A working task reaches its terminal status: failed for a JSON-RPC error or an isError
        result (the page's "Task Status"), else completed."""
        if self.status != "working":
            return
        kind, body = self.outcome
        failed = kind == "error" or body.get("isError") is True
        self.move("failed" if failed else "completed", "The tool reported an error." if failed else None)

    def move(self, status: str, message: str | None = None) -> None:
        self.status, self.status_message, self.last_updated_at = status, message, _now()

    def wire(self) -> JSON:
        task: JSON = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl,
            "pollInterval": POLL_INTERVAL_MS,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task


def _requestor(ctx: ServerRequestContext[Any, Any]) -> str:
    """Who asks: the Mcp-Session-Id of a Streamable HTTP session, else the one connection a stdio (or
    sessionless) server process has."""
    headers = getattr(ctx.request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return f"session:{session}" if session else "connection"


def _not_found(task_id: Any) -> MCPError:
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"Failed to retrieve task: Task not found ({clip(str(task_id), 80)})",
    )


def _method_not_found(method: str) -> MCPError:
    return MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=method)


class TaskSupport:
    """The task store and the middleware and handlers that serve it on a `Server`.

    `support` maps a tool name to its `execution.taskSupport` ("optional" or "required"); a tool not
    named has none, which means "forbidden". `install` adds the middleware and the tasks/* handlers.
    """

    def __init__(self, support: dict[str, str], *, page_size: int = 2) -> None:
        self.support = dict(support)
        self.page_size = page_size
        self.tasks: dict[str, _Task] = {}

    def capability(self) -> JSON:
        return {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

    def install(self, server: Server[Any]) -> None:
        server.middleware.append(self.middleware)
        for method, handler in (
            ("tasks/get", self.get),
            ("tasks/result", self.result),
            ("tasks/list", self.list),
            ("tasks/cancel", self.cancel),
        ):
            server.add_request_handler(method, types.RequestParams, handler)

    # ------------------------------------------------------------------ the middleware

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            answer = await call_next(ctx)
            if isinstance(answer, dict) and answer.get("protocolVersion") == TASKS_REVISION:
                answer = {
                    **answer,
                    "capabilities": {**answer.get("capabilities", {}), "tasks": self.capability()},
                }
            return answer
        if ctx.protocol_version != TASKS_REVISION:
            return await call_next(ctx)
        if ctx.method == "tools/list":
            return self._with_execution(await call_next(ctx))
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            return await self._call(ctx, call_next, ctx.params)
        return await call_next(ctx)

    def _with_execution(self, answer: HandlerResult) -> HandlerResult:
        if not isinstance(answer, dict) or not isinstance(answer.get("tools"), list):
            return answer
        listed = [
            {**tool, "execution": {"taskSupport": self.support[tool["name"]]}}
            if isinstance(tool, dict) and tool.get("name") in self.support
            else tool
            for tool in answer["tools"]
        ]
        return {**answer, "tools": listed}

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: JSON
    ) -> HandlerResult:
        name = params.get("name")
        support = self.support.get(name) if isinstance(name, str) else None
        task = params.get("task")
        if task is None:
            if support == "required":
                # Tool-Level Negotiation 2.3: a required tool called plainly MUST be -32601.
                raise MCPError(
                    code=types.METHOD_NOT_FOUND,
                    message=f"Tool {clip(str(name), 128)!r} must be called as a task",
                )
            return await call_next(ctx)
        if support is None:
            # 2.1: a task call of a tool without taskSupport SHOULD be -32601.
            raise MCPError(
                code=types.METHOD_NOT_FOUND, message=f"Tool {clip(str(name), 128)!r} does not support tasks"
            )
        try:
            metadata = types.TaskMetadata.model_validate(task)
        except ValidationError:
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid params.task") from None
        plain = {k: v for k, v in params.items() if k != "task"}
        try:
            answer = await call_next(replace(ctx, params=plain))
        except MCPError as exc:
            outcome: tuple[str, JSON] = (
                "error",
                exc.error.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        else:
            # The inner chain answers the wire form (a dict); a model is dumped as the runner would.
            body = (
                answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                if isinstance(answer, BaseModel)
                else answer
            )
            outcome = ("result", dict(body or {}))
        ttl = min(metadata.ttl if metadata.ttl is not None else DEFAULT_TTL_MS, MAX_TTL_MS)
        created = _Task(task_id=secrets.token_urlsafe(24), owner=_requestor(ctx), ttl=ttl, outcome=outcome)
        self._forget()
        self.tasks[created.task_id] = created
        return {"task": created.wire()}

    def _forget(self) -> None:
        """Drop the tasks past their ttl (2025-11-25: a receiver may delete a task and its result once
        its ttl has elapsed), then the oldest while the store is full: a long-lived server stays bounded."""
        now = time.monotonic()
        for task_id in [i for i, t in self.tasks.items() if t.expires <= now]:
            del self.tasks[task_id]
        while len(self.tasks) >= MAX_TASKS:
            del self.tasks[next(iter(self.tasks))]

    # ------------------------------------------------------------------ the tasks/* methods

    def _gate(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version != TASKS_REVISION:
            raise _method_not_found(ctx.method)

    def _find(self, ctx: ServerRequestContext[Any, Any]) -> _Task:
        params = ctx.params or {}
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise MCPError(code=types.INVALID_PARAMS, message="taskId must be a string")
        self._forget()
        found = self.tasks.get(task_id)
        if found is None or found.owner != _requestor(ctx):
            raise _not_found(task_id)
        return found

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        self._gate(ctx)
        task = self._find(ctx)
        task.settle()
        return task.wire()

    async def result(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        self._gate(ctx)
        task = self._find(ctx)
        task.settle()
        related = {RELATED_TASK: {"taskId": task.task_id}}
        if task.status == "cancelled":
            raise MCPError(
                code=types.INVALID_PARAMS, message="Task was cancelled: it has no result", data=related
            )
        kind, body = task.outcome
        if kind == "error":
            raise MCPError(code=body["code"], message=body["message"], data=body.get("data"))
        return {**body, "_meta": {**body.get("_meta", {}), **related}}

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        self._gate(ctx)
        cursor = (ctx.params or {}).get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid pagination cursor")
        self._forget()
        own = [t for t in self.tasks.values() if t.owner == _requestor(ctx)]
        page, next_cursor = paginate(own, cursor, self.page_size)
        for task in page:
            task.settle()
        answer: JSON = {"tasks": [task.wire() for task in page]}
        if next_cursor is not None:
            answer["nextCursor"] = next_cursor
        return answer

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        self._gate(ctx)
        task = self._find(ctx)
        if task.status in TERMINAL:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Cannot cancel task: already in terminal status {task.status!r}",
            )
        task.move("cancelled", "The task was cancelled by request.")
        return task.wire()
