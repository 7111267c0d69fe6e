"""Mutants of the base reference server's prompts, completion and logging, one planted defect each.

Each defect overrides one method of `PromptFeatures` (or, for what the SDK itself guards, one handler
or a middleware); everything else is the reference. `tests/packs/base/test_base_prompts.py` runs the prompt,
completion and logging checks against each and asserts the exact set of non-PASS verdicts.

    python -m tests.servers.base_prompts_mutants --defect NAME [--http]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from conformance_reference.base_prompts import LOG_LEVELS, PromptFeatures
from conformance_reference.base_server import build_server
from conformance_reference.serving import serve, serving_parser

JSON = dict[str, Any]


@dataclass
class AudioIn2024(PromptFeatures):
    """An audio block in every revision, 2024-11-05 too, whose PromptMessage has no audio content."""

    def media(self, revision: str) -> list[types.PromptMessage]:
        return super().media("2025-03-26") if revision < "2025-03-26" else super().media(revision)


@dataclass
class ImageNotBase64(PromptFeatures):
    """The image block's data is not base64."""

    def media(self, revision: str) -> list[types.PromptMessage]:
        out = super().media(revision)
        for message in out:
            if isinstance(message.content, types.ImageContent):
                message.content = types.ImageContent(type="image", data="not base64!", mime_type="image/png")
        return out


@dataclass
class EmbeddedNoMime(PromptFeatures):
    """Embedded resources without their MIME type (the prompts page makes it a MUST)."""

    def messages(self, revision: str, name: str, arguments: dict[str, str]) -> list[types.PromptMessage]:
        out = super().messages(revision, name, arguments)
        for message in out:
            if isinstance(message.content, types.EmbeddedResource):
                message.content.resource.mime_type = None
        return out


@dataclass
class UnknownPromptEmpty(PromptFeatures):
    """prompts/get of an unknown prompt answers an empty prompt instead of -32602."""

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if not any(p.name == params.name for p in self.prompts()):
            return types.GetPromptResult(messages=[])
        return await super().get_prompt(ctx, params)


@dataclass
class MissingArgumentAccepted(PromptFeatures):
    """A missing required argument is taken as empty, not refused."""

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        prompt = next((p for p in self.prompts() if p.name == params.name), None)
        given = dict(params.arguments or {})
        for argument in (prompt.arguments or []) if prompt else []:
            given.setdefault(argument.name, "")
        return await super().get_prompt(ctx, params.model_copy(update={"arguments": given}))


@dataclass
class Completion101(PromptFeatures):
    """101 completion values: one more than an answer may hold."""

    async def completion(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        matches = [
            v
            for v in self.candidates(params.ref, params.argument.name)
            if v.startswith(params.argument.value)
        ]
        values = matches[:101]
        return types.CompleteResult(
            completion=types.Completion(
                values=values, total=len(matches), has_more=len(matches) > len(values)
            )
        )


@dataclass
class CompletionTotalLow(PromptFeatures):
    """`total` counts fewer options than the values sent."""

    async def completion(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        result = await super().completion(ctx, params)
        completion = result.completion
        completion.total = max(len(completion.values) - 1, 0)
        completion.has_more = False
        return result


@dataclass
class CompletionUnknownPromptOk(PromptFeatures):
    """Completion for an unknown prompt answers no values instead of -32602."""

    def candidates(self, ref: Any, argument: str) -> tuple[str, ...]:
        if isinstance(ref, types.PromptReference) and not any(p.name == ref.name for p in self.prompts()):
            return ()
        return super().candidates(ref, argument)


@dataclass
class SetLevelRefused(PromptFeatures):
    """logging/setLevel answered with an error."""

    async def set_logging_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        raise MCPError(code=types.INTERNAL_ERROR, message="log levels are fixed")


@dataclass
class LevelIgnored(PromptFeatures):
    """Every level is sent whatever logging/setLevel said."""

    def allowed(self, ctx: ServerRequestContext[Any], level: str) -> bool:
        return True


@dataclass
class LogWithoutOptIn(PromptFeatures):
    """2026-07-28: an info message on every tools/call, logLevel or not (the SDK's gate bypassed)."""

    async def log_call(self, ctx: ServerRequestContext[Any], tool: str) -> None:
        if ctx.protocol_version < "2026-07-28":
            return await super().log_call(ctx, tool)
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level="warning", data={"tool": tool}, logger="reference"
            )
        )
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)


@dataclass
class BelowOptInLevel(PromptFeatures):
    """2026-07-28: a debug message for a request that asked for logLevel warning or above."""

    async def log_call(self, ctx: ServerRequestContext[Any], tool: str) -> None:
        await super().log_call(ctx, tool)
        meta = (ctx.params or {}).get("_meta")
        if isinstance(meta, dict) and meta.get(types.LOG_LEVEL_META_KEY) in LOG_LEVELS:
            notification = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level="debug", data={"tool": tool}, logger="reference"
                )
            )
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)


@dataclass
class NoPrompts(PromptFeatures):
    """Conformant: declares prompts and lists none (mcp 2.x declares prompts by default); its tools log."""

    def prompts(self) -> list[types.Prompt]:
        return []


@dataclass
class NoPromptsLogWithoutOptIn(NoPrompts, LogWithoutOptIn):
    """NoPrompts, and 2026-07-28 log messages for tool calls that asked for none."""


class _EditResult:
    """Rewrites the JSON result of one method after the handler ran: what the SDK's own types would not
    let a handler return (a role no revision has, numbers for completion values)."""

    def __init__(self, method: str, edit: Callable[[JSON, Any], None]) -> None:
        self.method, self.edit = method, edit

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != self.method or not isinstance(result, BaseModel | dict):
            return result
        body = (
            result
            if isinstance(result, dict)
            else result.model_dump(by_alias=True, exclude_none=True, mode="json")
        )
        self.edit(body, ctx.params or {})
        return body


def _system_role(body: JSON, params: Any) -> None:
    if params.get("name") == "greeting":
        body["messages"][0]["role"] = "system"


def _argument_without_name(body: JSON, params: Any) -> None:
    for prompt in body.get("prompts", []):
        for argument in prompt.get("arguments", []):
            if argument.get("name") == "style":
                del argument["name"]


def _template_values_numbers(body: JSON, params: Any) -> None:
    if params.get("ref", {}).get("type") == "ref/resource":
        body["completion"] = {"values": [1, 2, 3], "total": 3, "hasMore": False}


class _AcceptAnyLevel:
    """logging/setLevel with a level MCP does not have is answered with an empty result, not refused
    (the SDK itself refuses it before any handler runs)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        level = (ctx.params or {}).get("level")
        if ctx.method == "logging/setLevel" and level not in LOG_LEVELS:
            return {}
        return await call_next(ctx)


def _no_logging_capability(server: Server[Any]) -> None:
    """Log messages sent as ever, but without logging/setLevel the logging capability is not declared."""
    server._request_handlers.pop("logging/setLevel")


class _DropInvalidLogLevel:
    """Strips an unknown `_meta` logLevel before the SDK validates the request: it is served, not refused."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and meta.get(types.LOG_LEVEL_META_KEY) not in (None, *LOG_LEVELS):
            del meta[types.LOG_LEVEL_META_KEY]
        return await call_next(ctx)


def _invalid_log_level_served(server: Server[Any]) -> None:
    server.middleware.insert(0, _DropInvalidLogLevel())


FEATURES: dict[str, type[PromptFeatures]] = {
    "none": PromptFeatures,
    "audio-in-2024": AudioIn2024,
    "image-not-base64": ImageNotBase64,
    "embedded-no-mime": EmbeddedNoMime,
    "unknown-prompt-empty": UnknownPromptEmpty,
    "missing-argument-accepted": MissingArgumentAccepted,
    "completion-101": Completion101,
    "completion-total-low": CompletionTotalLow,
    "completion-unknown-prompt-ok": CompletionUnknownPromptOk,
    "set-level-refused": SetLevelRefused,
    "level-ignored": LevelIgnored,
    "log-without-opt-in": LogWithoutOptIn,
    "below-opt-in-level": BelowOptInLevel,
    "no-prompts": NoPrompts,
    "no-prompts-log-without-opt-in": NoPromptsLogWithoutOptIn,
    "no-prompts-no-logging-capability": NoPrompts,
}
SERVER_CHANGES: dict[str, Callable[[Server[Any]], None]] = {
    "system-role": lambda server: server.middleware.insert(0, _EditResult("prompts/get", _system_role)),
    "prompt-argument-no-name": lambda server: server.middleware.insert(
        0, _EditResult("prompts/list", _argument_without_name)
    ),
    "template-values-not-strings": lambda server: server.middleware.insert(
        0, _EditResult("completion/complete", _template_values_numbers)
    ),
    "invalid-level-accepted": lambda server: server.middleware.insert(0, _AcceptAnyLevel()),
    "no-logging-capability": _no_logging_capability,
    "invalid-log-level-served": _invalid_log_level_served,
    "no-prompts-no-logging-capability": _no_logging_capability,
}
DEFECTS = tuple(dict.fromkeys((*FEATURES, *SERVER_CHANGES)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = serving_parser("python -m tests.servers.base_prompts_mutants", __doc__ or "")
    parser.add_argument("--defect", choices=DEFECTS, default="none")
    args = parser.parse_args(argv)
    server = build_server(prompts=FEATURES.get(args.defect, PromptFeatures)())
    change = SERVER_CHANGES.get(args.defect)
    if change is not None:
        change(server)
    return serve(server, args)


if __name__ == "__main__":
    sys.exit(main())
