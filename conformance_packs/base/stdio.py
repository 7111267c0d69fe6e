"""stdio hygiene, judged last over everything the server wrote to stdout during the revision's cases."""

from __future__ import annotations

import base64

from conformance.engine.checks import check, missed
from conformance.engine.context import CaseContext
from conformance.protocol.jsonrpc import classify
from conformance.protocol.versions import BATCH_REVISIONS
from conformance.text import bytes_text


@check(
    "base.stdio.stdout-only-messages",
    "BASE-STDIO-001",
    "nothing but MCP messages on stdout",
    transports=("stdio",),
)
async def stdout_only_messages(ctx: CaseContext) -> None:
    await ctx.request("tools/list" if ctx.identity.has("tools") else "ping")
    lines = 0
    for entry in ctx.wire_log():
        if entry.get("channel") != "stdout" or entry.get("dir") != "recv":
            continue
        lines += 1
        if "note" in entry and "text" not in entry and "base64" not in entry:
            missed(f"stdout: {entry['note']}")
        if "base64" in entry:
            missed(
                "stdout carried bytes that are not UTF-8",
                why=bytes_text(base64.b64decode(entry["base64"]), 120),
            )
        frame = classify(entry["text"].encode("utf-8")) if "truncated_from" not in entry else None
        if frame is not None and (frame.kind == "garbage" or not _message(frame.value, ctx.revision)):
            missed(f"stdout carried a line that is not a JSON-RPC message: {entry['text'][:120]!r}")
    ctx.note(f"{lines} stdout lines, all JSON messages")


def _message(value: object, revision: str) -> bool:
    """A JSON object, or in 2025-03-26 (the one revision with JSON-RPC batches) an array of objects."""
    if isinstance(value, list) and revision in BATCH_REVISIONS:
        return bool(value) and all(isinstance(item, dict) for item in value)
    return isinstance(value, dict)
