"""The reference server's prompts, completions and logging, in every revision that has each.

Why a module of its own: the base server's tools and resources are one job, these three features
another (prompts with required and optional arguments and every content block type a revision has,
completion of prompt arguments and of the `ref://items/{item_id}` template variable, and legacy
`logging/setLevel` with log messages on every `tools/call`). `PromptFeatures` is a class so the test
mutants can plant one defect by overriding one method.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least

from conformance_reference.handlers import clip, paginate

__all__ = ["ITEM_IDS", "LOG_LEVELS", "PromptFeatures"]

#: Severity ascending (RFC 5424 as MCP's LoggingLevel orders it).
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: The levels every tools/call logs at (so a client that sets a level sees some vanish).
CALL_LOG_LEVELS: Final = ("debug", "info", "warning", "error")
#: More item ids than one completion answer may carry (100), so `total` and `hasMore` are exercised.
ITEM_IDS: Final = tuple(f"item-{n:03d}" for n in range(150))
MAX_COMPLETIONS: Final = 100
_STYLES: Final = ("formal", "friendly", "pirate")
_NAMES: Final = ("Ada", "Alan", "Grace", "Linus")
#: A 1x1 transparent PNG and a 4-byte WAV-like payload: base64 of real bytes, with their MIME types.
_PNG: Final = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6300010000050001a5f645400000000049454e44ae426082"
    )
).decode("ascii")
_WAV: Final = base64.b64encode(b"RIFF").decode("ascii")

_ITEM_TEMPLATE_URI: Final = "ref://items/{item_id}"
#: The greeting's question for a style (2026-07-28, to a client that declared form elicitation), its
#: inputRequests key and the state its retry echoes.
STYLE_KEY: Final = "style"
STYLE_STATE: Final = "greeting-style:1"
_STYLE_ASK: Final = types.ElicitRequest(
    params=types.ElicitRequestFormParams(
        mode="form",
        message="In what style should the greeting be?",
        requested_schema={
            "type": "object",
            "properties": {"style": {"type": "string", "enum": list(_STYLES)}},
        },
    )
)

# Logging is deprecated only from 2026-07-28 on, and the reference serves the revisions before it
# too, where it is a feature like any other: the SDK's warning about it would only fill stderr.
warnings.filterwarnings(
    "ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning
)


def _prompt(name: str, description: str, *arguments: tuple[str, bool]) -> types.Prompt:
    return types.Prompt(
        name=name,
        description=description,
        arguments=[
            types.PromptArgument(name=arg, description=f"The {arg.replace('_', ' ')}.", required=required)
            for arg, required in arguments
        ]
        or None,
    )


PROMPTS: Final = (
    _prompt("greeting", "Greet someone, in an optional style.", ("name", True), ("style", False)),
    _prompt("review_item", "Review one item, its text embedded.", ("item_id", True)),
    _prompt("media_sample", "Every content block type this revision has, one message each."),
)


def _text(role: Literal["user", "assistant"], text: str) -> types.PromptMessage:
    return types.PromptMessage(role=role, content=types.TextContent(type="text", text=text))


@dataclass
class PromptFeatures:
    """Prompts, completions and logging for `build_server`; each handler is named after its request."""

    page_size: int = 2
    #: The minimum log level each legacy connection set (`logging/setLevel`), by connection; the
    #: connection's parameters are kept in the value so their id is not reused while it is a key.
    levels: dict[int, tuple[Any, str]] = field(default_factory=dict)

    def handlers(self) -> tuple[Callable[..., Any], ...]:
        return (self.list_prompts, self.get_prompt, self.completion, self.set_logging_level)

    # ------------------------------------------------------------------ prompts

    def prompts(self) -> list[types.Prompt]:
        return list(PROMPTS)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        page, next_cursor = paginate(self.prompts(), params.cursor if params else None, self.page_size)
        return types.ListPromptsResult(prompts=page, next_cursor=next_cursor)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        prompt = next((p for p in self.prompts() if p.name == params.name), None)
        if prompt is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {clip(params.name, 128)}")
        arguments = dict(params.arguments or {})
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in arguments]
        if missing:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Missing required argument(s): {', '.join(missing)}"
            )
        if prompt.name == "greeting" and "style" not in arguments:
            asked = self.ask_style(ctx, params)
            if isinstance(asked, types.InputRequiredResult):
                return asked
            arguments.update(asked)
        return types.GetPromptResult(
            description=prompt.description,
            messages=self.messages(ctx.protocol_version, prompt.name, arguments),
        )

    def ask_style(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.InputRequiredResult | dict[str, str]:
        """2026-07-28, a client that declared form elicitation, no style given: the style is asked for
        (a prompts/get may ask for input as a tools/call may), and the retry's answer used; the state
        names only the question, so tampering with it can do no worse than fail the request. Any other
        client gets the default style."""
        declared = ctx.session.client_capabilities
        elicitation = declared.elicitation if declared is not None else None
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if not modern or elicitation is None or (elicitation.form is None and elicitation.url is not None):
            return {}
        answer = (params.input_responses or {}).get(STYLE_KEY)
        if params.request_state != STYLE_STATE or not isinstance(answer, types.ElicitResult):
            return types.InputRequiredResult(
                input_requests={STYLE_KEY: _STYLE_ASK}, request_state=STYLE_STATE
            )
        style = (answer.content or {}).get("style") if answer.action == "accept" else None
        return {"style": style} if isinstance(style, str) and style else {}

    def messages(self, revision: str, name: str, arguments: dict[str, str]) -> list[types.PromptMessage]:
        if name == "greeting":
            style = arguments.get("style", "friendly")
            return [_text("user", f"Greet {clip(arguments['name'], 64)} in a {clip(style, 32)} style.")]
        if name == "review_item":
            item_id = clip(arguments["item_id"], 64)
            uri = f"ref://items/{item_id}"
            contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"Item {item_id}\n")
            return [
                _text("user", f"Review item {item_id}; its text follows."),
                types.PromptMessage(
                    role="user", content=types.EmbeddedResource(type="resource", resource=contents)
                ),
                _text("assistant", "I will review it."),
            ]
        return self.media(revision)

    def media(self, revision: str) -> list[types.PromptMessage]:
        """One message per content block type the revision's PromptMessage admits: image and embedded
        resource in all, audio from 2025-03-26, resource_link from 2025-06-18 (each revision's schema)."""
        blob = types.BlobResourceContents(uri="ref://items/item-000", mime_type="image/png", blob=_PNG)
        blocks: list[Any] = [
            types.TextContent(type="text", text="A sample of every content block type."),
            types.ImageContent(type="image", data=_PNG, mime_type="image/png"),
            types.EmbeddedResource(type="resource", resource=blob),
        ]
        if is_version_at_least(revision, "2025-03-26"):
            blocks.append(types.AudioContent(type="audio", data=_WAV, mime_type="audio/wav"))
        if is_version_at_least(revision, "2025-06-18"):
            blocks.append(
                types.ResourceLink(
                    type="resource_link", uri="ref://docs/readme", name="readme", mime_type="text/plain"
                )
            )
        return [types.PromptMessage(role="user", content=block) for block in blocks]

    # ------------------------------------------------------------------ completion

    def candidates(self, ref: Any, argument: str) -> tuple[str, ...]:
        """Every value an argument may take (the completion answer is those matching the prefix)."""
        if isinstance(ref, types.ResourceTemplateReference):
            if ref.uri != _ITEM_TEMPLATE_URI:
                raise MCPError(
                    code=types.INVALID_PARAMS, message=f"Unknown resource template: {clip(ref.uri, 128)}"
                )
            return ITEM_IDS if argument == "item_id" else ()
        if not any(p.name == ref.name for p in self.prompts()):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {clip(ref.name, 128)}")
        return {"style": _STYLES, "name": _NAMES, "item_id": ITEM_IDS}.get(argument, ())

    async def completion(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        prefix = params.argument.value
        matches = [v for v in self.candidates(params.ref, params.argument.name) if v.startswith(prefix)]
        values = matches[:MAX_COMPLETIONS]
        return types.CompleteResult(
            completion=types.Completion(
                values=values, total=len(matches), has_more=len(matches) > len(values)
            )
        )

    # ------------------------------------------------------------------ logging

    async def set_logging_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        client = ctx.session.client_params
        self.levels[id(client)] = (client, params.level)
        return types.EmptyResult()

    def allowed(self, ctx: ServerRequestContext[Any], level: str) -> bool:
        """Legacy: at or above the connection's `logging/setLevel` level (all before one is set). The
        2026-07-28 per-request `_meta` opt-in is the SDK's own gate, applied after this one."""
        client = ctx.session.client_params
        _, minimum = self.levels.get(id(client), (None, "debug"))
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(minimum)

    async def log_call(self, ctx: ServerRequestContext[Any], tool: str) -> None:
        """A log message at each of CALL_LOG_LEVELS about a tools/call, on that request's stream."""
        for level in CALL_LOG_LEVELS:
            if self.allowed(ctx, level):
                await ctx.session.send_log_message(
                    level,
                    {"tool": clip(tool, 128), "level": level},
                    "reference",
                    related_request_id=ctx.request_id,
                )
