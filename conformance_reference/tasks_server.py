"""The tasks suite's reference server: the 2026-07-28 tasks extension (SEP-2663,
`io.modelcontextprotocol/tasks`) over three small tools.

Why hand-written: the `mcp` SDK 2.3.0 serves extensions (`Server.extensions`, a claimed `resultType`
is passed through unsieved) but ships no tasks extension: no task store, no tasks/get, tasks/update or
tasks/cancel. So, as `base_tasks` does for 2025-11-25, a middleware answers the tools/call it turns
into a task (the SDK trusts a result a middleware returns) and the tasks/* methods are request handlers
registered by name. Everything here is 2026-07-28 only; in the legacy revisions the server offers no
tasks at all.

The tools: `echo` always answers at once; `job` answers with a task when the request declares the
extension and at once otherwise; `job_required` answers with a task when the request declares the
extension and with -32021 (Missing Required Client Capability) naming it otherwise. A task runs its
tool when it is created, shows `working` in its CreateTaskResult and reaches its terminal status when
it is next looked at (tasks/get), so a tasks/cancel sent first finds it still working, as a long tool
would be. The store is in memory, one per process, bounded like `base_tasks`'s; a task ID is an
unguessable token, the only thing binding a task to its requestor in a sessionless revision.

Run it as ``python -m conformance_reference.tasks_server`` (stdio) or with ``--http``.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import jsonschema
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from conformance_reference.handlers import (
    JSON,
    checked_call,
    clip,
    object_schema,
    one_page_tools,
    reference_server,
    unknown_tool,
)
from conformance_reference.serving import serve, serving_parser

__all__ = ["TASKS", "TaskExtension", "build_server", "main"]

TASKS: Final = "io.modelcontextprotocol/tasks"
MODERN: Final = "2026-07-28"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
MISSING_CAPABILITY: Final = -32021
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
TTL_MS: Final = 3_600_000
POLL_INTERVAL_MS: Final = 100
MAX_TASKS: Final = 1024
#: Which tools become tasks: "optional" ones when the request declares the extension, "required" ones
#: only then (-32021 otherwise).
CREATORS: Final = {"job": "optional", "job_required": "required"}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def declares_tasks(params: Any) -> bool:
    """Whether a request's own `_meta` clientCapabilities declares the extension (SEP-2575: client
    capabilities travel on each request; nothing declared before counts)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    caps = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS), dict)


def missing_capability(what: str) -> MCPError:
    """-32021 naming the extension in data.requiredCapabilities (2026-07-28 schema)."""
    return MCPError(
        code=MISSING_CAPABILITY,
        message=f"Missing required client capability: {what} needs the {TASKS} extension",
        data={"requiredCapabilities": {"extensions": {TASKS: {}}}},
    )


@dataclass
class Task:
    """One task: its wire members and the answer the tools/call would have had."""

    task_id: str
    #: ("result", CallToolResult) or ("error", JSON-RPC error object).
    outcome: tuple[str, JSON]
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    last_updated_at: str = ""
    expires: float = 0.0

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at
        self.expires = time.monotonic() + TTL_MS / 1000

    def settle(self) -> None:
        """A working task reaches its terminal status: failed for a JSON-RPC error only, completed for
        any result, an isError one included (SEP-2663, Task Execution Errors)."""
        if self.status == "working":
            self.move("failed" if self.outcome[0] == "error" else "completed")

    def move(self, status: str, message: str | None = None) -> None:
        self.status, self.status_message, self.last_updated_at = status, message, _now()

    def wire(self) -> JSON:
        """The Task; with the payload of its status (DetailedTask) when `detailed`."""
        task: JSON = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task

    def detailed(self) -> JSON:
        task = self.wire()
        body = self.outcome[1]
        if self.status == "completed":
            task["result"] = body
        elif self.status == "failed":
            task["error"] = body
        return task


class TaskExtension:
    """The task store, the middleware that creates tasks and the tasks/* handlers, on a `Server`.

    A test mutant subclasses it and overrides one step to plant one defect.
    """

    def __init__(self, creators: dict[str, str] | None = None) -> None:
        self.creators = dict(CREATORS if creators is None else creators)
        self.tasks: dict[str, Task] = {}

    def install(self, server: Server[Any]) -> None:
        server.middleware.append(self.middleware)
        for method, handler in (
            ("tasks/get", self.get),
            ("tasks/update", self.update),
            ("tasks/cancel", self.cancel),
        ):
            server.add_request_handler(method, types.RequestParams, handler)

    # ------------------------------------------------------------------ the middleware

    def capabilities(self, capabilities: JSON) -> JSON:
        extensions = {**capabilities.get("extensions", {}), TASKS: {}}
        return {**capabilities, "extensions": extensions}

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version != MODERN:
            return await call_next(ctx)
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "server/discover":
            answer = _wire(await call_next(ctx))
            return {**answer, "capabilities": self.capabilities(dict(answer.get("capabilities") or {}))}
        if ctx.method == "tools/call" and params.get("name") in self.creators:
            return await self.call(ctx, call_next, params)
        if ctx.method == "subscriptions/listen":
            self.listen(params)
        return await call_next(ctx)

    async def call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: JSON
    ) -> HandlerResult:
        """A creator tool: a task when the request declares the extension, else at once (optional) or
        -32021 (required)."""
        if not declares_tasks(params):
            if self.creators[params["name"]] == "required":
                raise missing_capability(f"the tool {clip(str(params['name']), 128)!r}")
            return await call_next(ctx)
        try:
            outcome: tuple[str, JSON] = ("result", _wire(await call_next(ctx)))
        except MCPError as exc:
            outcome = ("error", exc.error.model_dump(by_alias=True, mode="json", exclude_none=True))
        task = self.create(outcome)
        return {"resultType": "task", **task.wire()}

    def create(self, outcome: tuple[str, JSON]) -> Task:
        """A task stored before its CreateTaskResult leaves (SEP-2663: durably created first)."""
        self._forget()
        task = Task(task_id=secrets.token_urlsafe(24), outcome=outcome)
        self.tasks[task.task_id] = task
        return task

    def listen(self, params: JSON) -> None:
        """Task notifications are the extension's: asked for without it, -32021. This server sends none,
        so with the extension declared the listen goes on to the SDK, which serves no listen (-32601)."""
        notifications = params.get("notifications")
        if isinstance(notifications, dict) and "taskIds" in notifications and not declares_tasks(params):
            raise missing_capability("task status notifications")

    def _forget(self) -> None:
        now = time.monotonic()
        for task_id in [i for i, t in self.tasks.items() if t.expires <= now]:
            del self.tasks[task_id]
        while len(self.tasks) >= MAX_TASKS:
            del self.tasks[next(iter(self.tasks))]

    # ------------------------------------------------------------------ the tasks/* methods

    def gate(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Outside 2026-07-28 no tasks method exists; in it, only for a request declaring the extension."""
        if ctx.protocol_version != MODERN:
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=ctx.method)
        if not declares_tasks(ctx.params):
            raise missing_capability(ctx.method)

    def find(self, ctx: ServerRequestContext[Any, Any]) -> Task:
        self.gate(ctx)
        task_id = (ctx.params or {}).get("taskId")
        if not isinstance(task_id, str):
            raise MCPError(code=types.INVALID_PARAMS, message="taskId must be a string")
        self._forget()
        found = self.tasks.get(task_id)
        if found is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Failed to retrieve task: Task not found ({clip(task_id, 80)})",
            )
        return found

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        task = self.find(ctx)
        task.settle()
        return task.detailed()

    async def update(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        self.find(ctx)
        if not isinstance((ctx.params or {}).get("inputResponses"), dict):
            raise MCPError(code=types.INVALID_PARAMS, message="inputResponses must be an object")
        # No task of this server asks for input: every key is unknown, and ignored (SHOULD).
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> JSON:
        task = self.find(ctx)
        if task.status not in TERMINAL:
            task.move("cancelled", "The task was cancelled by request.")
        return {}


def _wire(answer: HandlerResult) -> JSON:
    """A handler's answer in wire form (the inner chain may answer a model)."""
    if isinstance(answer, BaseModel):
        return answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(answer or {})


def _tools() -> dict[str, tuple[types.Tool, jsonschema.protocols.Validator]]:
    text_in = object_schema({"text": {"type": "string"}}, ["text"])
    text_out = object_schema({"text": {"type": "string"}}, ["text"])
    described = {
        "echo": "Return the given text unchanged, at once.",
        "job": "Return the given text reversed; as a task when the client declares the tasks extension.",
        "job_required": "Return the given text reversed; only as a task (the tasks extension is required).",
    }
    annotations = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    return {
        name: (
            types.Tool(
                name=name,
                description=text,
                input_schema=text_in,
                output_schema=text_out,
                annotations=annotations,
            ),
            jsonschema.Draft202012Validator(text_in),
        )
        for name, text in described.items()
    }


def build_server(tasks: TaskExtension | None = None) -> Server[Any]:
    """The server: three tools and the extension (`tasks`: a mutant passes its own)."""
    tools = _tools()

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        found = tools.get(params.name)
        if found is None:
            raise unknown_tool(params.name)
        tool, validator = found
        arguments: JSON = dict(params.arguments or {})
        run = (
            (lambda a: {"text": a["text"]}) if tool.name == "echo" else (lambda a: {"text": a["text"][::-1]})
        )
        return checked_call(ctx.protocol_version, tool.name, validator, arguments, run)

    server = reference_server(
        "mcp-conformance-tasks-reference",
        handlers=(one_page_tools([tool for tool, _ in tools.values()]), call_tool),
        title="MCP conformance tasks-extension reference server",
        instructions=f"Reference target of the tasks suite ({TASKS}); every behaviour shown is expected.",
        tool_input_schema=lambda name: tools[name][0].input_schema if name in tools else None,
    )
    (tasks or TaskExtension()).install(server)
    return server


def main(argv: Sequence[str] | None = None, tasks: TaskExtension | None = None) -> int:
    """CLI entry point; returns the process exit status (0 on EOF, SIGTERM or SIGINT)."""
    parser = serving_parser(
        "python -m conformance_reference.tasks_server",
        "Run the tasks suite's reference server (stdio by default).",
    )
    return serve(build_server(tasks), parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
