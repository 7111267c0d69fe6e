"""The fixture's content tools (FIXTURE-001 to -007): what each returns, and the log lines one sends.

A result that breaks the revision's CallToolResult schema FAILs (a published schema); what the official
suite expects beyond the schema (the block a tool is named for, a MIME type the schema leaves free) is a
WARN saying it is the official suite's expectation, since no sentence of the specification names a tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.pack_api import Call, CaseContext, check, missed, shape_errors, weak
from conformance_packs.base.prompting import log_messages
from conformance_packs.official_fixture.fixture import blocks, first_call, texts

Expect = Callable[[dict[str, Any]], list[str]]


async def judge_content(ctx: CaseContext, name: str, official: str, expect: Expect) -> None:
    """The first answered call of `name`: a result valid against the revision's schema (FAIL), holding
    what the official suite expects of it (WARN)."""
    call = await first_call(ctx, name, official)
    result = call.result
    if not isinstance(result, dict):
        weak(
            f"{name} was answered with an error, not the result the official suite expects", **call.excerpt()
        )
    problems = shape_errors("callToolResult", result, ctx.revision)
    if problems:
        missed(
            f"{name}'s result breaks the CallToolResult schema: " + "; ".join(problems[:5]), **call.excerpt()
        )
    if result.get("isError") is True:
        weak(f"{name} answered isError: true, not the content the official suite expects", **call.excerpt())
    misses = expect(result)
    if misses:
        weak(
            f"{name}'s result is not what the official suite's {official} expects: " + "; ".join(misses),
            **call.excerpt(),
        )


def text_expected(result: dict[str, Any]) -> list[str]:
    return [] if any(t.strip() for t in texts(result)) else ["no text block with text"]


def image_expected(result: dict[str, Any]) -> list[str]:
    return [] if blocks(result, "image") else ["no image block"]


def audio_expected(result: dict[str, Any]) -> list[str]:
    found = blocks(result, "audio")
    if not found:
        return ["no audio block"]
    return (
        []
        if found[0].get("mimeType") == "audio/wav"
        else [f"mimeType {found[0].get('mimeType')!r}, not 'audio/wav'"]
    )


def resource_expected(result: dict[str, Any]) -> list[str]:
    found = blocks(result, "resource")
    if not found:
        return ["no resource block"]
    resource = found[0].get("resource") or {}
    return [] if resource.get("mimeType") else ["the embedded resource has no mimeType"]


def mixed_expected(result: dict[str, Any]) -> list[str]:
    return [f"no {kind} block" for kind in ("text", "image", "resource") if not blocks(result, kind)]


@check("official-fixture.content.simple-text", "FIXTURE-001", "test_simple_text returns a text block")
async def simple_text(ctx: CaseContext) -> None:
    await judge_content(ctx, "test_simple_text", "tools-call-simple-text", text_expected)


@check("official-fixture.content.image", "FIXTURE-002", "test_image_content returns an image block")
async def image(ctx: CaseContext) -> None:
    await judge_content(ctx, "test_image_content", "tools-call-image", image_expected)


@check("official-fixture.content.audio", "FIXTURE-003", "test_audio_content returns an audio/wav block")
async def audio(ctx: CaseContext) -> None:
    await judge_content(ctx, "test_audio_content", "tools-call-audio", audio_expected)


@check("official-fixture.content.embedded", "FIXTURE-004", "test_embedded_resource returns a resource block")
async def embedded(ctx: CaseContext) -> None:
    await judge_content(ctx, "test_embedded_resource", "tools-call-embedded-resource", resource_expected)


@check(
    "official-fixture.content.mixed",
    "FIXTURE-005",
    "test_multiple_content_types returns text, image, resource",
)
async def mixed(ctx: CaseContext) -> None:
    await judge_content(ctx, "test_multiple_content_types", "tools-call-mixed-content", mixed_expected)


@check(
    "official-fixture.content.error", "FIXTURE-006", "test_error_handling reports its failure with isError"
)
async def error_result(ctx: CaseContext) -> None:
    call = await first_call(ctx, "test_error_handling", "tools-call-error")
    if not isinstance(call.result, dict):
        missed(
            "test_error_handling's failure came as a JSON-RPC error, not a result with isError: true",
            **call.excerpt(),
        )
    if call.result.get("isError") is not True:
        missed("test_error_handling's result does not set isError: true", **call.excerpt())
    if not any(t.strip() for t in texts(call.result)):
        weak("test_error_handling's error result has no text saying what failed", **call.excerpt())


@check(
    "official-fixture.content.logging",
    "FIXTURE-007",
    "test_tool_with_logging sends log messages while it runs",
    eras=("legacy",),
)
async def logging(ctx: CaseContext) -> None:
    call: Call = await first_call(ctx, "test_tool_with_logging", "tools-call-with-logging")
    seen = log_messages(call)
    if len(seen) < 3:
        missed(
            f"test_tool_with_logging sent {len(seen)} notifications/message with its answer; the official "
            "suite expects at least 3",
            **call.excerpt(),
        )
