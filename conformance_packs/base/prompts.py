"""prompts/list and prompts/get checks (when the prompts capability is offered).

Prompts are got with the arguments their listing declares (required only, then all), never with
names a test fixture would have: whatever the server lists is what is judged.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from conformance.pack_api import CaseContext, at_least, check, jsonrpc, missed, skip
from conformance_packs.base.common import judge_pages
from conformance_packs.base.prompting import arguments_of, got_prompts, prompts, shape_errors

UNKNOWN_PROMPT = "conformance-no-such-prompt-7f3a"
#: type "/" subtype, each an RFC 6838 restricted-name (parameters allowed after ";").
MIME_RE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$"
)
#: An absolute URI: a scheme (RFC 3986 section 3.1), a colon and something after it.
URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def is_base64(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def blocks(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The content block of each message of a prompts/get result (objects only)."""
    messages = result.get("messages")
    found = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict):
            found.append(content)
    return found


@check("base.prompts.list-shape", "BASE-PROMPT-001", "prompts/list result shape", capability="prompts")
async def list_shape(ctx: CaseContext) -> None:
    await judge_pages(
        ctx, "prompts/list", "prompts", lambda result: shape_errors("listPromptsResult", result, ctx.revision)
    )


@check("base.prompts.get-shape", "BASE-PROMPT-002", "prompts/get result shape", capability="prompts")
async def get_shape(ctx: CaseContext) -> None:
    for got in await got_prompts(ctx):
        problems = shape_errors("getPromptResult", got.result(), ctx.revision)
        if problems:
            missed(
                f"prompts/get {got.name!r} with {sorted(got.arguments)}: " + "; ".join(problems),
                **got.call.excerpt(),
            )


@check(
    "base.prompts.binary-content",
    "BASE-PROMPT-003",
    "image and audio data is base64 with a valid MIME type",
    capability="prompts",
)
async def binary_content(ctx: CaseContext) -> None:
    kinds = ("image", "audio") if at_least(ctx.revision, "2025-03-26") else ("image",)
    judged = 0
    for got in await got_prompts(ctx):
        for block in blocks(got.result() or {}):
            if block.get("type") not in kinds:
                continue
            judged += 1
            if not is_base64(block.get("data")):
                missed(f"prompt {got.name!r}: {block['type']} data is not base64", **got.call.excerpt())
            mime = block.get("mimeType")
            if not isinstance(mime, str) or not MIME_RE.match(mime):
                missed(
                    f"prompt {got.name!r}: {block['type']} mimeType {mime!r} is no MIME type",
                    **got.call.excerpt(),
                )
    if not judged:
        skip(f"no prompt message carried {' or '.join(kinds)} content")
    ctx.note(f"{judged} {'/'.join(kinds)} block(s) judged")


@check(
    "base.prompts.embedded-resource",
    "BASE-PROMPT-004",
    "an embedded resource has a URI, a MIME type and text or base64 blob",
    capability="prompts",
)
async def embedded_resource(ctx: CaseContext) -> None:
    judged = 0
    for got in await got_prompts(ctx):
        for block in blocks(got.result() or {}):
            resource = block.get("resource") if block.get("type") == "resource" else None
            if not isinstance(resource, dict):
                continue
            judged += 1
            where = f"prompt {got.name!r}: embedded resource {resource.get('uri')!r}"
            if not isinstance(resource.get("uri"), str) or not URI_RE.match(resource["uri"]):
                missed(f"{where} has no valid URI", **got.call.excerpt())
            mime = resource.get("mimeType")
            if not isinstance(mime, str) or not MIME_RE.match(mime):
                missed(f"{where} has no valid MIME type (mimeType {mime!r})", **got.call.excerpt())
            if "blob" in resource and not is_base64(resource["blob"]):
                missed(f"{where}: blob is not base64", **got.call.excerpt())
            if not isinstance(resource.get("text"), str) and "blob" not in resource:
                missed(f"{where} has neither text nor blob", **got.call.excerpt())
    if not judged:
        skip("no prompt message embedded a resource")
    ctx.note(f"{judged} embedded resource(s) judged")


@check(
    "base.prompts.unknown-name",
    "BASE-PROMPT-005",
    "prompts/get of an unknown prompt is -32602",
    capability="prompts",
)
async def unknown_name(ctx: CaseContext) -> None:
    call = await ctx.request("prompts/get", {"name": UNKNOWN_PROMPT, "arguments": {}})
    if call.error is None:
        missed(f"prompts/get of {UNKNOWN_PROMPT!r}, a prompt not listed, was not refused", **call.excerpt())
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(
            f"prompts/get of an unknown prompt drew {call.drew()}, not -32602",
            **call.excerpt(),
        )


@check(
    "base.prompts.missing-argument",
    "BASE-PROMPT-006",
    "prompts/get without a required argument is -32602",
    capability="prompts",
)
async def missing_argument(ctx: CaseContext) -> None:
    listed = await prompts(ctx)
    prompt = next((p for p in listed if any(a.get("required") is True for a in arguments_of(p))), None)
    if prompt is None:
        skip("no listed prompt has a required argument")
    call = await ctx.request("prompts/get", {"name": prompt["name"], "arguments": {}})
    required = [a["name"] for a in arguments_of(prompt) if a.get("required") is True]
    ctx.note(f"prompt {prompt['name']!r} got without its required argument(s) {', '.join(required)}")
    if call.error is None:
        missed(f"prompts/get {prompt['name']!r} without {required} was not refused", **call.excerpt())
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(f"the missing argument drew {call.drew()}, not -32602", **call.excerpt())
