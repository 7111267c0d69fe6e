"""What the base reference server offers for resources beyond reading text, and for progress and
cancellation: a binary resource, a counter resource that changes, subscriptions to it in both eras, and
a read-only tool that reports progress and can be cancelled.

Why a counter that changes when it is read: a black-box client can only see `notifications/resources/
updated` if something changes the resource, and reading is the one thing every client may do to any
resource. Each read counts as a visit (a hit counter), so the read that a check sends after subscribing
is the event that changes it, with no timer and no write tool: the update is sent before the read is
answered, so a check sees it without waiting.

The legacy era (through 2025-11-25) subscribes with `resources/subscribe`, per connection; 2026-07-28
uses the SDK's `subscriptions/listen` handler, fed through an in-memory bus. Each rule is a method of
`ResourceFeatures`, so a mutant (`tests/servers/base_resources_mutants.py`) overrides exactly one.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from conformance_reference.handlers import invalid_arguments, object_schema, structured_result

__all__ = ["BLOB_URI", "COUNTER_URI", "COUNT_TOOL", "ResourceFeatures"]

BLOB_URI: Final = "ref://data/blob"
COUNTER_URI: Final = "ref://data/counter"
COUNT_TOOL: Final = "count"
#: Eight bytes that are no text (NUL, 0xFF): a client can only receive them as a base64 `blob`.
BLOB_BYTES: Final = b"\x00\x01MCP\xfe\xff\n"
#: Steps of the `count` tool and the pause after each: long enough that a cancellation sent after the
#: first progress notification arrives while the tool still works, short enough for a cheap run.
COUNT_STEPS: Final = 5
STEP_SECONDS: Final = 0.08
#: Connections whose legacy subscriptions are remembered (the oldest forgotten first): bounds a server
#: that many short HTTP sessions subscribe to.
MAX_SUBSCRIBERS: Final = 256


class ResourceFeatures:
    """The resources, the tool and the subscription handlers this module adds to the base server."""

    def __init__(self) -> None:
        self.visits = 0
        #: Legacy subscriptions: the URIs each connection subscribed to (`_connection_key`).
        self.subscribers: OrderedDict[str, set[str]] = OrderedDict()
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)

    # ------------------------------------------------------------------ what is listed

    def resources(self) -> list[types.Resource]:
        return [
            types.Resource(
                uri=BLOB_URI,
                name="blob",
                title="Eight binary bytes",
                description="Bytes that are not text, served as base64.",
                mime_type="application/octet-stream",
                size=len(BLOB_BYTES),
            ),
            types.Resource(
                uri=COUNTER_URI,
                name="counter",
                title="Visit counter",
                description="How many times it was read; each read changes it (subscribe to see).",
                mime_type="text/plain",
            ),
        ]

    def templates(self) -> list[types.ResourceTemplate]:
        """Templates beyond the base server's own (none: a mutant adds a broken one)."""
        return []

    #: Whether the server serves resources/templates/list (no revision requires it: a mutant drops it).
    serves_templates = True

    def refused(self, uri: str) -> Exception | None:
        """The error a read of `uri` fails with before anything is served (none: a mutant makes a listed
        resource unreadable, as a file gone or a host unreachable would)."""
        return None

    def tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=COUNT_TOOL,
                description=(
                    f"Count to {COUNT_STEPS}, one step every {int(STEP_SECONDS * 1000)} ms, reporting "
                    "progress after each step when the request carries a progressToken."
                ),
                input_schema=object_schema({}),
                output_schema=object_schema({"counted": {"type": "integer"}}, ["counted"]),
                annotations=types.ToolAnnotations(
                    read_only_hint=True, destructive_hint=False, open_world_hint=False
                ),
            )
        ]

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return next((dict(t.input_schema) for t in self.tools() if t.name == name), None)

    def handlers(self) -> tuple[Callable[..., Any], ...]:
        """Request handlers, each named after the SDK's `on_<name>` it fills."""

        async def subscribe_resource(
            ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
        ) -> types.EmptyResult:
            return await self.subscribe(ctx, str(params.uri))

        async def unsubscribe_resource(
            ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
        ) -> types.EmptyResult:
            return await self.unsubscribe(ctx, str(params.uri))

        async def subscriptions_listen(
            ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
        ) -> types.SubscriptionsListenResult:
            return await self.listen(ctx, params)

        return subscribe_resource, unsubscribe_resource, subscriptions_listen

    # ------------------------------------------------------------------ the tool

    async def call(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult | None:
        """The answer to a call of one of `tools()`, or None for another tool.

        It takes its time only when the caller asked for progress: a call without a progressToken (the
        sweep's, the fuzzer's hundreds) is answered at once, so the tool costs a run nothing.
        """
        if name != COUNT_TOOL:
            return None
        if arguments:
            return invalid_arguments(
                ctx.protocol_version, f"Invalid arguments for tool '{name}': it takes none"
            )
        if _progress_token(ctx) is not None:
            for step in range(1, COUNT_STEPS + 1):
                await anyio.sleep(STEP_SECONDS)
                await self.progress(ctx, step)
        return structured_result({"counted": COUNT_STEPS})

    async def progress(self, ctx: ServerRequestContext[Any], step: int) -> None:
        """One progress notification (a no-op when the request carried no progressToken)."""
        await ctx.session.report_progress(step, COUNT_STEPS, f"step {step} of {COUNT_STEPS}")

    # ------------------------------------------------------------------ reading

    async def read(self, ctx: ServerRequestContext[Any], uri: str) -> types.ReadResourceResult | None:
        """The contents of one of `resources()`, or None for another URI."""
        if uri == BLOB_URI:
            blob = base64.b64encode(BLOB_BYTES).decode("ascii")
            contents: Any = types.BlobResourceContents(
                uri=uri, mime_type="application/octet-stream", blob=blob
            )
            return types.ReadResourceResult(contents=[contents])
        if uri == COUNTER_URI:
            self.visits += 1
            await self.changed(ctx, uri)
            text = f"{self.visits}\n"
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
            )
        return None

    async def changed(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        """Tell whoever subscribed to `uri` that it changed: the listen streams (2026-07-28), or this
        connection if it subscribed (legacy; on the request's own stream, so Streamable HTTP carries it)."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.bus.publish(ResourceUpdated(uri))
        elif uri in self.subscribers.get(_connection_key(ctx), set()):
            notification = types.ResourceUpdatedNotification(
                params=types.ResourceUpdatedNotificationParams(uri=uri)
            )
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

    # ------------------------------------------------------------------ legacy subscriptions

    async def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> types.EmptyResult:
        key = _connection_key(ctx)
        self.subscribers.setdefault(key, set()).add(uri)
        self.subscribers.move_to_end(key)
        while len(self.subscribers) > MAX_SUBSCRIBERS:
            self.subscribers.popitem(last=False)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> types.EmptyResult:
        self.subscribers.get(_connection_key(ctx), set()).discard(uri)
        return types.EmptyResult()


def _connection_key(ctx: ServerRequestContext[Any]) -> str:
    """Which connection a legacy request came on: its Mcp-Session-Id over Streamable HTTP, "" on stdio
    (one connection per process). The SDK makes a session object per request, so it cannot be the key."""
    headers = getattr(ctx.request, "headers", None)
    return str(headers.get("mcp-session-id", "")) if headers is not None else ""


def _progress_token(ctx: ServerRequestContext[Any]) -> Any:
    """The progressToken of the request's `_meta` as sent (None when absent)."""
    meta = (ctx.params or {}).get("_meta")
    return meta.get("progressToken") if isinstance(meta, dict) else None
