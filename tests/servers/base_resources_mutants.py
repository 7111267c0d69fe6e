"""Mutants of the base reference server's resources, subscriptions, progress and cancellation: the
reference with exactly one planted defect each.

    python -m tests.servers.base_resources_mutants --defect NAME          # stdio
    python -m tests.servers.base_resources_mutants --defect NAME --http   # Streamable HTTP (not PROXIED)

Each defect overrides one method of `ResourceFeatures`, or changes one kind of line between the harness
and the reference (`PROXIED`), so a check that fails can only fail on that defect.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY

from conformance_reference import base_server, serving
from conformance_reference.base_resources import BLOB_URI, COUNT_STEPS, COUNT_TOOL, ResourceFeatures
from conformance_reference.handlers import object_schema

JSON = dict[str, Any]


async def _raw_notify(ctx: ServerRequestContext[Any], method: str, params: JSON) -> None:
    """A notification the SDK's typed models would refuse to build, on the request's own channel."""
    await ctx.session._request_outbound.notify(method, params)  # private: a planted defect


class BadBlob(ResourceFeatures):
    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> Any:
        if uri == BLOB_URI:
            return {"contents": [{"uri": uri, "mimeType": "application/octet-stream", "blob": "not base64!"}]}
        return await super().read(ctx, uri)


class BadTemplate(ResourceFeatures):
    def templates(self) -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uri_template="ref://broken/{item id}", name="broken")]


def _unknown(uri: str) -> bool:
    return uri.startswith("conformance://")


class UnknownLegacyCode(ResourceFeatures):
    """-32002 for an unknown resource in every revision (2026-07-28 moved it to -32602)."""

    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> Any:
        if _unknown(uri):
            raise MCPError(code=-32002, message="Resource not found", data={"uri": uri})
        return await super().read(ctx, uri)


class UnknownInvalidParams(ResourceFeatures):
    """-32602 for an unknown resource in every revision (before 2026-07-28 the SHOULD is -32002)."""

    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> Any:
        if _unknown(uri):
            raise MCPError(code=types.INVALID_PARAMS, message="Resource not found", data={"uri": uri})
        return await super().read(ctx, uri)


class UnknownNoData(ResourceFeatures):
    """-32602 for an unknown resource, its error carrying no data (2026-07-28's example names the URI)."""

    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> Any:
        if _unknown(uri):
            raise MCPError(code=types.INVALID_PARAMS, message="Resource not found")
        return await super().read(ctx, uri)


class UnknownEmpty(ResourceFeatures):
    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> Any:
        if _unknown(uri):
            return types.ReadResourceResult(contents=[])
        return await super().read(ctx, uri)


class ReadErrorFirst(ResourceFeatures):
    """The first listed resource cannot be read now (-32603, as a server whose file is gone answers)."""

    def refused(self, uri: str) -> Exception | None:
        if uri == _first_listed():
            return MCPError(code=types.INTERNAL_ERROR, message=f"open {uri}: no such file or directory")
        return None


def _first_listed() -> str:
    return str(base_server._STATIC_RESOURCES[0][0].uri)  # private: the reference's own first resource


class NoTemplates(ResourceFeatures):
    """resources/templates/list is not served (-32601), which no revision requires."""

    serves_templates = False


class RefuseSubscribe(ResourceFeatures):
    """Declares subscribe (the handler is registered) but refuses every subscription."""

    async def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> types.EmptyResult:
        raise MCPError(code=types.INTERNAL_ERROR, message="subscriptions are not available")


class UpdateUnsubscribed(ResourceFeatures):
    """Sends the update on every change, subscribed or not."""

    async def changed(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        if ctx.protocol_version.startswith("2026"):
            return await super().changed(ctx, uri)
        notification = types.ResourceUpdatedNotification(
            params=types.ResourceUpdatedNotificationParams(uri=uri)
        )
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)


class UpdateWithoutUri(ResourceFeatures):
    async def changed(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        if ctx.protocol_version.startswith("2026") or not self.subscribers.get("", set()):
            return await super().changed(ctx, uri)
        await _raw_notify(ctx, "notifications/resources/updated", {"url": uri})


class _ListenMutant(ResourceFeatures):
    """A hand-written subscriptions/listen, so one rule of it can be broken."""

    ack = True
    tag = True
    extra_log = False

    def handlers(self) -> tuple[Callable[..., Any], ...]:
        subscribe, unsubscribe, _ = super().handlers()

        async def subscriptions_listen(
            ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
        ) -> types.SubscriptionsListenResult:
            return await self.serve_listen(ctx, params)

        return subscribe, unsubscribe, subscriptions_listen

    async def serve_listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
        uris = list(params.notifications.resource_subscriptions or [])
        queue: asyncio.Queue[str] = asyncio.Queue()
        unsubscribe = self.bus.subscribe(lambda event: queue.put_nowait(getattr(event, "uri", "")))
        try:
            if self.ack:
                await _raw_notify(
                    ctx,
                    "notifications/subscriptions/acknowledged",
                    {"_meta": meta, "notifications": {"resourceSubscriptions": uris}},
                )
            while True:
                uri = await queue.get()
                if uri not in uris:
                    continue
                if self.extra_log:
                    await _raw_notify(
                        ctx, "notifications/message", {"_meta": meta, "level": "info", "data": f"read {uri}"}
                    )
                await _raw_notify(
                    ctx,
                    "notifications/resources/updated",
                    {**({"_meta": meta} if self.tag else {}), "uri": uri},
                )
        finally:
            unsubscribe()


class ListenNoAck(_ListenMutant):
    ack = False


class ListenUntagged(_ListenMutant):
    tag = False


class ListenExtraKind(_ListenMutant):
    extra_log = True


class _ProgressMutant(ResourceFeatures):
    """`count` with its progress reporting replaced (it still runs its steps when asked for progress)."""

    async def progress(self, ctx: ServerRequestContext[Any], step: int) -> None:
        token = (ctx.params or {}).get("_meta", {}).get("progressToken")
        await _raw_notify(ctx, "notifications/progress", self.params(token, step))

    def params(self, token: Any, step: int) -> JSON:
        return {"progressToken": token, "progress": step, "total": COUNT_STEPS}


class ProgressWrongToken(_ProgressMutant):
    def params(self, token: Any, step: int) -> JSON:
        return {"progressToken": f"{token}-other", "progress": step, "total": COUNT_STEPS}


class ProgressDecreasing(_ProgressMutant):
    def params(self, token: Any, step: int) -> JSON:
        return {"progressToken": token, "progress": COUNT_STEPS - step, "total": COUNT_STEPS}


class ProgressNotNumber(_ProgressMutant):
    def params(self, token: Any, step: int) -> JSON:
        return {"progressToken": token, "progress": f"{step * 20}%"}


class ProgressUnasked(ResourceFeatures):
    """Reports progress on a call that carried no progressToken, under a token of its own."""

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        if name == "count" and not (ctx.params or {}).get("_meta", {}).get("progressToken"):
            await _raw_notify(ctx, "notifications/progress", {"progressToken": "unasked", "progress": 1})
        return await super().call(ctx, name, arguments)


class ProgressAfterResponse(ResourceFeatures):
    """One more progress notification right after the call's response."""

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        result = await super().call(ctx, name, arguments)
        token = (ctx.params or {}).get("_meta", {}).get("progressToken")
        if name == "count" and token is not None:
            outbound = ctx.session._connection.outbound  # private: a planted defect

            async def late() -> None:
                for _ in range(3):
                    await asyncio.sleep(0)
                await outbound.notify("notifications/progress", {"progressToken": token, "progress": 99})

            _BACKGROUND.add(asyncio.get_running_loop().create_task(late()))
        return result


_BACKGROUND: set[asyncio.Task[None]] = set()


class ServerCancels(ResourceFeatures):
    """Sends notifications/cancelled for the client's own tools/call (2026-07-28 forbids any use but
    ending a listen stream)."""

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        if name == "count":
            await _raw_notify(
                ctx, "notifications/cancelled", {"requestId": ctx.request_id, "reason": "mutant"}
            )
        return await super().call(ctx, name, arguments)


class CountArguments(ResourceFeatures):
    """The reference with `count` shaped like many real servers' counting tools: it takes the steps and
    the delay between them (seconds), both required, and waits whether or not progress is asked. The
    simplest valid arguments (steps 1, delay 0) show one progress value and nothing to cancel, so the
    harness must size them (`conformance.arguments.pacing`) to judge anything."""

    max_steps = 10

    def tools(self) -> list[types.Tool]:
        schema = object_schema(
            {
                "steps": {"type": "integer", "minimum": 1, "maximum": self.max_steps},
                "delay": {"type": "number", "minimum": 0, "description": "seconds between steps"},
            },
            ["steps", "delay"],
        )
        (count,) = super().tools()
        return [count.model_copy(update={"input_schema": schema, "output_schema": None})]

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        if name != COUNT_TOOL:
            return None
        steps, delay = int(arguments.get("steps", 1)), float(arguments.get("delay", 0))
        for step in range(1, steps + 1):
            await anyio.sleep(delay)
            token = (ctx.params or {}).get("_meta", {}).get("progressToken")
            if token is not None:
                await _raw_notify(ctx, "notifications/progress", self.step_params(token, step, steps))
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"counted {steps}")])

    def step_params(self, token: Any, step: int, steps: int) -> JSON:
        return {"progressToken": token, "progress": step, "total": steps}


class CountArgumentsDecreasing(CountArguments):
    def step_params(self, token: Any, step: int, steps: int) -> JSON:
        return {"progressToken": token, "progress": steps - step, "total": steps}


class CountOneStep(CountArguments):
    """A count that can only take one step: one progress value per call, however it is called."""

    max_steps = 1


class Sleeper(ResourceFeatures):
    """The reference with `count` replaced by a tool that sleeps the seconds asked and reports no
    progress: a cancellation must be sent while it sleeps, with no progress to show it is running."""

    def tools(self) -> list[types.Tool]:
        (count,) = super().tools()
        schema = object_schema({"seconds": {"type": "number", "minimum": 0}}, ["seconds"])
        return [
            count.model_copy(
                update={
                    "name": SLEEP_TOOL,
                    "description": "Sleep the seconds asked, then answer.",
                    "input_schema": schema,
                    "output_schema": None,
                }
            )
        ]

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        if name != SLEEP_TOOL:
            return None
        await anyio.sleep(float(arguments.get("seconds", 0)))
        return types.CallToolResult(content=[types.TextContent(type="text", text="slept")])


SLEEP_TOOL = "sleep"


class SleeperSlowDefault(Sleeper):
    """The sleeper whose `seconds` is optional and defaults to a minute (server-everything's long-running
    operation defaults to 10 s): called with its simplest arguments (`{}`) it outlasts the request
    timeout, so the tool sweep must size the wait to get an answer."""

    default = 60.0

    def tools(self) -> list[types.Tool]:
        (sleep,) = super().tools()
        schema = object_schema({"seconds": {"type": "number", "minimum": 0, "default": self.default}}, [])
        return [sleep.model_copy(update={"input_schema": schema})]

    async def call(self, ctx: ServerRequestContext[Any], name: str, arguments: JSON) -> Any:
        if name != SLEEP_TOOL:
            return None
        await anyio.sleep(float(arguments.get("seconds", self.default)))
        return types.CallToolResult(content=[types.TextContent(type="text", text="slept")])


DEFECTS: dict[str, Callable[[], ResourceFeatures]] = {
    "none": ResourceFeatures,
    "bad-blob": BadBlob,
    "no-text-no-blob": ResourceFeatures,
    "bad-template": BadTemplate,
    "unknown-legacy-code": UnknownLegacyCode,
    "unknown-invalid-params": UnknownInvalidParams,
    "unknown-empty": UnknownEmpty,
    "unknown-no-data": UnknownNoData,
    "refuse-subscribe": RefuseSubscribe,
    "read-error-first": ReadErrorFirst,
    "no-templates": NoTemplates,
    "update-unsubscribed": UpdateUnsubscribed,
    "update-without-uri": UpdateWithoutUri,
    "listen-no-ack": ListenNoAck,
    "listen-untagged": ListenUntagged,
    "listen-extra-kind": ListenExtraKind,
    "progress-wrong-token": ProgressWrongToken,
    "progress-decreasing": ProgressDecreasing,
    "progress-not-number": ProgressNotNumber,
    "progress-unasked": ProgressUnasked,
    "progress-after-response": ProgressAfterResponse,
    "server-cancels": ServerCancels,
    "ignore-cancel": ResourceFeatures,
    "error-on-cancel": ResourceFeatures,
    "crossing-result": ResourceFeatures,
    "count-arguments": CountArguments,
    "count-arguments-decreasing": CountArgumentsDecreasing,
    "count-arguments-one-step": CountOneStep,
    "count-arguments-ignore-cancel": CountArguments,
    "sleeper": Sleeper,
    "sleeper-ignore-cancel": Sleeper,
    "sleeper-slow-default": SleeperSlowDefault,
}


#: The blob the reference serves, as its answer spells it on the wire.
_BLOB_FIELD = b'"blob":"AAFNQ1D+/wo=",'


def _proxy(
    keep: Callable[[bytes], bool], rewrite: Callable[[bytes], bytes], child_defect: str = "none"
) -> int:
    """The reference behind a line filter (stdio only): the defects the SDK will not produce itself.

    `keep` decides which client lines reach the server (`ignore-cancel` drops every cancellation, so the
    server answers the cancelled call); `rewrite` changes each server line (`no-text-no-blob` strips the
    blob from an answer, which the SDK's own result validation would refuse to send).
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.base_resources_mutants", "--defect", child_defect],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    out = child.stdout

    def pump() -> None:
        for line in out:
            _write(rewrite(line))

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    try:
        for line in sys.stdin.buffer:
            if keep(line):
                child.stdin.write(line)
                child.stdin.flush()
    except BrokenPipeError:
        pass
    finally:
        child.stdin.close()
    code = child.wait()
    thread.join(5)
    return code


_STDOUT = threading.Lock()


def _write(line: bytes) -> None:
    """One line to the harness: the child's pump and a planted answer never interleave their bytes."""
    with _STDOUT:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def _no_cancel(line: bytes) -> bool:
    return b'"notifications/cancelled"' not in line


def _cancelled_id(line: bytes) -> Any:
    """The requestId of a notifications/cancelled line (None for any other line)."""
    if b'"notifications/cancelled"' not in line:
        return None
    params = json.loads(line).get("params")
    return params.get("requestId") if isinstance(params, dict) else None


_CALLS: set[str] = set()


def _error_on_cancel(line: bytes) -> bool:
    """Answer a cancelled call with -32800 as soon as the cancellation is read (a response for the
    cancelled request), then pass the cancellation on, so the reference stops and sends nothing more. A
    cancellation of an id no tools/call used is passed on unanswered, as the reference leaves it."""
    if b'"tools/call"' in line:
        _CALLS.add(json.dumps(json.loads(line).get("id")))
    request_id = _cancelled_id(line)
    if request_id is not None and json.dumps(request_id) in _CALLS:
        error = {"code": -32800, "message": "Request cancelled"}
        _write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n")
    return True


class _Crossing:
    """Let the cancelled call's own result cross the cancellation: the cancellation is held back (never
    passed on) until the reference has written the call's answer, and every client line after it waits
    as well, so the result arrives before the answer to the request sent after the cancellation."""

    def __init__(self) -> None:
        self.answered: dict[str, threading.Event] = {}

    def keep(self, line: bytes) -> bool:
        request_id = _cancelled_id(line)
        if request_id is None:
            return True
        # Bounded: the reference answers a counting call in well under a second.
        self.answered.setdefault(json.dumps(request_id), threading.Event()).wait(10)
        return False

    def seen(self, line: bytes) -> bytes:
        try:
            value = json.loads(line)
        except ValueError:
            return line
        if isinstance(value, dict) and "id" in value and "method" not in value:
            self.answered.setdefault(json.dumps(value["id"]), threading.Event()).set()
        return line


_CROSSING = _Crossing()


def _same(line: bytes) -> bytes:
    return line


PROXIED: dict[str, tuple[Callable[[bytes], bool], Callable[[bytes], bytes], str]] = {
    "ignore-cancel": (_no_cancel, _same, "none"),
    "error-on-cancel": (_error_on_cancel, _same, "none"),
    "crossing-result": (_CROSSING.keep, _CROSSING.seen, "none"),
    "count-arguments-ignore-cancel": (_no_cancel, _same, "count-arguments"),
    "sleeper-ignore-cancel": (_no_cancel, _same, "sleeper"),
    "no-text-no-blob": (lambda line: True, lambda line: line.replace(_BLOB_FIELD, b""), "none"),
}


def main() -> int:
    parser = serving.serving_parser("python -m tests.servers.base_resources_mutants", __doc__ or "")
    parser.add_argument("--defect", default="none", choices=sorted(DEFECTS))
    args = parser.parse_args()
    if args.defect in PROXIED:
        if args.http:
            parser.error(f"--defect {args.defect} is planted between stdio lines: no --http")
        return _proxy(*PROXIED[args.defect])
    return serving.serve(base_server.build_server(resources=DEFECTS[args.defect]()), args)


if __name__ == "__main__":
    sys.exit(main())
