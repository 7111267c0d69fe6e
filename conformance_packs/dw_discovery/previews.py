"""Payload previews (DWD-PREV-*): finding tool results that carry them, and judging each one.

Two shapes are read, wherever they sit in a result:

* event previews, as the Durable sample app's `get_workflow_history{include_payloads: true}` returns
  them: an object with `payload_preview: {preview, size_bytes, preview_bytes, truncated}`;
* envelope previews of the tool-result envelope: `payload_preview` (a string) beside
  `payload_preview_truncated`.

The limit of a preview is the nearest enclosing `payload_preview_limit_bytes` of the result, else the
discovery document's. Byte counts are of UTF-8. Gap rule G-D4: a limit of 0 means no preview bytes, and
a cut must keep valid UTF-8 (so a truncated preview may end up to 3 bytes short of the limit).

The judging functions are pure, so the project's tests pin them without a server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import CaseContext, Outcome, skip, unjudgeable
from conformance_packs.dw_discovery.document import pointer
from conformance_packs.dw_discovery.locate import (
    Refused,
    find_document,
    list_all,
    may_call,
    settings,
    tool_payload,
)

HISTORY_TOOL = "get_workflow_history"
LISTING_TOOL = "list_workflows"
MAX_WORKFLOWS = 3
REPLACEMENT = "\ufffd"


def utf8_length(text: str) -> tuple[int, bool]:
    """(bytes, valid): the UTF-8 length of `text`; lone surrogates count as the bytes they stand for."""
    try:
        return len(text.encode("utf-8")), True
    except UnicodeEncodeError:
        try:
            return len(text.encode("utf-8", "surrogateescape")), False
        except UnicodeEncodeError:
            return len(text.encode("utf-8", "surrogatepass")), False


def _count(value: Any) -> int | None:
    """A JSON integer >= 0 (booleans and fractions are not counts), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


@dataclass
class Preview:
    """One preview as found, with the limit that applies to it."""

    where: str
    kind: str  # "event" or "envelope"
    holder: dict[str, Any]
    fields: dict[str, Any]
    limit: int | None
    limit_source: str

    @property
    def text(self) -> str | None:
        value = self.fields.get("preview")
        return value if isinstance(value, str) else None

    @property
    def size(self) -> int | None:
        return _count(self.fields.get("size_bytes"))

    @property
    def declared_bytes(self) -> int | None:
        return _count(self.fields.get("preview_bytes"))

    @property
    def truncated(self) -> bool | None:
        value = self.fields.get("truncated")
        return value if isinstance(value, bool) else None

    @property
    def cut(self) -> bool:
        """The preview does not hold the whole payload, by its flag or by its byte counts."""
        if self.truncated is True:
            return True
        size, shown = self.size, self.declared_bytes
        return size is not None and shown is not None and shown < size

    def full_text(self) -> str | None:
        """The encoded payload, when the result carries it and an ordinary encoding gives `size_bytes`.

        The payload is encoded the ways servers commonly do (compact JSON, with or without escaped
        non-ASCII and slashes); only an encoding whose length equals `size_bytes` is trusted.
        """
        if self.kind != "event" or "payload" not in self.holder or self.size is None:
            return None
        payload = self.holder["payload"]
        for ascii_only in (False, True):
            text = json.dumps(payload, separators=(",", ":"), ensure_ascii=ascii_only)
            for candidate in (text, text.replace("/", "\\/")):
                if utf8_length(candidate)[0] == self.size:
                    return candidate
        return None


@dataclass
class PreviewSet:
    previews: list[Preview] = field(default_factory=list)
    #: (where, value) of every per-result `payload_preview_limit_bytes` seen in a preview-bearing result.
    result_limits: list[tuple[str, Any]] = field(default_factory=list)
    document_limit: int | None = None
    looked_for: str = ""
    problems: list[str] = field(default_factory=list)


def extract(
    value: Any, where: str, document_limit: int | None
) -> tuple[list[Preview], list[tuple[str, Any]]]:
    """Every preview inside one result value, and the per-result limits that govern them."""
    previews: list[Preview] = []
    limits: list[tuple[str, Any]] = []
    for path, holder, limit, limit_at in _walk(value, [], None, ""):
        at = f"{where} {pointer(path)}"
        if "payload_preview_limit_bytes" in holder:
            limits.append((f"{at}/payload_preview_limit_bytes", holder["payload_preview_limit_bytes"]))
        applied, source = (limit, f"result {limit_at}") if limit is not None else (document_limit, "document")
        if document_limit is None and limit is None:
            source = ""
        inner = holder.get("payload_preview")
        if isinstance(inner, dict) and "preview" in inner:
            previews.append(Preview(f"{at}/payload_preview", "event", holder, dict(inner), applied, source))
        elif "payload_preview_truncated" in holder and (inner is None or isinstance(inner, str)):
            fields = {"preview": inner or "", "truncated": holder["payload_preview_truncated"]}
            previews.append(Preview(f"{at}/payload_preview", "envelope", holder, fields, applied, source))
    return previews, limits


def _walk(
    value: Any, path: list[Any], limit: int | None, limit_at: str
) -> Iterator[tuple[list[Any], dict[str, Any], int | None, str]]:
    if isinstance(value, dict):
        own = _count(value.get("payload_preview_limit_bytes"))
        if own is not None:
            limit, limit_at = own, pointer([*path, "payload_preview_limit_bytes"])
        yield path, value, limit, limit_at
        for key, sub in value.items():
            yield from _walk(sub, [*path, key], limit, limit_at)
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _walk(sub, [*path, index], limit, limit_at)


# ----------------------------------------------------------------------------- judging one preview


def within_limit(p: Preview) -> str | None:
    """DWD-PREV-001: the preview's UTF-8 bytes do not exceed the limit (0: no bytes at all)."""
    if p.text is None or p.limit is None:
        return None
    length, _ = utf8_length(p.text)
    if length > p.limit:
        return f"{p.where}: preview is {length} bytes, over the limit of {p.limit} ({p.limit_source})"
    return None


def byte_count(p: Preview) -> str | None:
    """DWD-PREV-002: the counts are JSON integers and `preview_bytes` is the preview's UTF-8 length."""
    if p.kind != "event":
        return None
    if "preview" not in p.fields or not isinstance(p.fields.get("preview"), str):
        return f"{p.where}: preview is not a string: {p.fields.get('preview')!r:.60}"
    for name in ("size_bytes", "preview_bytes"):
        if _count(p.fields.get(name)) is None:
            return f"{p.where}: {name} is not an integer >= 0: {p.fields.get(name)!r:.60}"
    assert p.text is not None and p.declared_bytes is not None
    length, _ = utf8_length(p.text)
    if p.declared_bytes != length:
        return f"{p.where}: preview_bytes says {p.declared_bytes}, the preview is {length} bytes"
    outer = p.holder.get("payload_size_bytes")
    if outer is not None and _count(outer) != p.size:
        return f"{p.where}: size_bytes {p.size} differs from the event's payload_size_bytes {outer!r}"
    return None


def truncated_flag(p: Preview) -> str | None:
    """DWD-PREV-002: `truncated == (size_bytes > limit)`; an untruncated preview is the whole payload."""
    if p.kind != "event" or p.limit is None or p.size is None or p.truncated is None or p.text is None:
        if p.kind == "event" and "truncated" in p.fields and p.truncated is None:
            return f"{p.where}: truncated is not a boolean: {p.fields['truncated']!r:.60}"
        return None
    expected = p.size > p.limit
    if p.truncated != expected:
        return (
            f"{p.where}: truncated is {json.dumps(p.truncated)} but size_bytes {p.size} "
            f"{'>' if expected else '<='} the limit {p.limit}"
        )
    if not p.truncated:
        length, _ = utf8_length(p.text)
        if length != p.size or p.declared_bytes != p.size:
            return (
                f"{p.where}: not truncated, yet the preview is {length} bytes (preview_bytes "
                f"{p.declared_bytes}) of a {p.size}-byte payload"
            )
        full = p.full_text()
        if full is not None and full != p.text:
            return f"{p.where}: not truncated, yet the preview differs from the payload the result carries"
    return None


def utf8_cut(p: Preview) -> tuple[str | None, str | None]:
    """G-D4 / DWD-PREV-002: (problem, weak note). A cut keeps whole code points.

    Definite: the preview holds a lone surrogate (no UTF-8 encoding exists), or the result carries the
    payload and the preview is not a prefix of it. Weak, when the payload is not carried: a cut preview
    that ends in U+FFFD (the usual trace of a decoder repairing a split character), or a cut preview
    more than 3 bytes shorter than the limit allows.
    """
    if p.text is None:
        return None, None
    length, valid = utf8_length(p.text)
    if not valid:
        return (
            f"{p.where}: the preview is not valid Unicode (a lone surrogate): the cut split a character",
            None,
        )
    if not p.cut:
        return None, None
    full = p.full_text()
    if full is not None:
        if not full.startswith(p.text):
            tail = p.text[-3:]
            hint = (
                " (it ends in U+FFFD: a character was split and repaired)"
                if tail.endswith(REPLACEMENT)
                else ""
            )
            return f"{p.where}: the preview is not a prefix of the payload{hint}", None
        return None, None
    if p.text.endswith(REPLACEMENT):
        return None, f"{p.where}: a cut preview ends in U+FFFD, the trace of a split character"
    if p.limit is not None and p.size is not None:
        room = min(p.limit, p.size)
        if length < room - 3:
            return None, f"{p.where}: a cut preview of {length} bytes is more than 3 bytes short of {room}"
    return None, None


def full_payload(p: Preview) -> str | None:
    """DWD-PREV-004: a cut preview's full payload is in the result, or explicitly unavailable."""
    if not p.cut:
        return None
    if p.holder.get("payload_unavailable") is True or p.holder.get("payload_available") is False:
        return None
    key = "payload" if p.kind == "event" else "result"
    if p.holder.get(key) is not None:
        return None
    return (
        f"{p.where}: the preview is cut, and the result neither carries `{key}` "
        "nor marks the payload unavailable (payload_unavailable: true)"
    )


# ----------------------------------------------------------------------------- collecting


async def collect(ctx: CaseContext) -> PreviewSet:
    """Previews from the configured preview calls, or from get_workflow_history; cached per target."""
    if "dw:previews" not in ctx.shared:
        try:
            ctx.shared["dw:previews"] = await _collect(ctx)
        except Outcome as outcome:  # a SKIP or ERROR is remembered too: one set of calls per target
            ctx.shared["dw:previews"] = outcome
    found = ctx.shared["dw:previews"]
    if isinstance(found, Outcome):
        raise type(found)(found.message, found.evidence)
    assert isinstance(found, PreviewSet)
    return found


async def previews_or_skip(ctx: CaseContext) -> PreviewSet:
    found = await collect(ctx)
    if not found.previews:
        reason = f"needs: a tool result with payload previews; looked for {found.looked_for}"
        if found.problems:
            reason += "; " + "; ".join(found.problems[:3])
        skip(reason)
    return found


async def _collect(ctx: CaseContext) -> PreviewSet:
    try:
        table = settings(ctx)
    except Refused as exc:
        skip(f"the [dw-discovery] configuration was refused (see the serve check): {exc}")
    located = await find_document(ctx)
    doc = located.document if isinstance(located.document, dict) else {}
    out = PreviewSet(document_limit=_count(doc.get("payload_preview_limit_bytes")))
    if "preview_arguments" in table or "preview_tool" in table:
        tool = str(table.get("preview_tool", HISTORY_TOOL))
        configured = table.get("preview_arguments", {})
        await _call_all(ctx, out, tool, configured if isinstance(configured, list) else [configured])
        out.looked_for = f"the configured preview call(s) of {tool!r}"
        if not out.previews and out.problems:
            unjudgeable("the configured preview call failed: " + "; ".join(out.problems[:3]))
        return out
    tools, _ = await list_all(ctx, "tools/list", "tools")
    by_name = {t.get("name"): t for t in tools}
    history = by_name.get(HISTORY_TOOL)
    out.looked_for = (
        f"{HISTORY_TOOL}{{workflow_id, include_payloads: true}} with workflow ids from {LISTING_TOOL} "
        f"(or set [dw-discovery] preview_tool and preview_arguments)"
    )
    if history is None or not may_call(ctx, history):
        out.problems.append(f"no callable {HISTORY_TOOL} (absent, or not annotated readOnlyHint: true)")
        return out
    ids = await _workflow_ids(ctx, by_name.get(LISTING_TOOL))
    if not ids:
        out.problems.append(f"no workflow id from {LISTING_TOOL}{{show_recent: true}}")
        return out
    props = _properties(history)
    calls: list[dict[str, Any]] = []
    for workflow_id in ids[:MAX_WORKFLOWS]:
        arguments: dict[str, Any] = {"workflow_id": workflow_id, "include_payloads": True}
        if "limit" in props:
            maximum = props["limit"].get("maximum") if isinstance(props["limit"], dict) else None
            arguments["limit"] = min(100, maximum) if isinstance(maximum, int) else 100
        calls.append(arguments)
    await _call_all(ctx, out, HISTORY_TOOL, calls)
    return out


def _properties(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


async def _workflow_ids(ctx: CaseContext, lister: dict[str, Any] | None) -> list[str]:
    if lister is None or not may_call(ctx, lister):
        return []
    props = _properties(lister)
    arguments: dict[str, Any] = {}
    if "show_recent" in props:
        arguments["show_recent"] = True
    if "limit" in props:
        arguments["limit"] = 10
    call = await ctx.request("tools/call", {"name": LISTING_TOOL, "arguments": arguments})
    value, _ = tool_payload(call.result)
    ids: list[str] = []
    for _, holder, _, _ in _walk(value, [], None, ""):
        for key in ("recent_workflows", "workflows"):
            items = holder.get(key)
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and isinstance(item.get("workflow_id"), str):
                    ids.append(item["workflow_id"])
    return list(dict.fromkeys(ids))


async def _call_all(ctx: CaseContext, out: PreviewSet, tool: str, calls: list[dict[str, Any]]) -> None:
    for index, arguments in enumerate(calls):
        call = await ctx.request("tools/call", {"name": tool, "arguments": arguments})
        label = f"{tool}#{index + 1}"
        if not isinstance(call.result, dict) or call.result.get("isError") is True:
            out.problems.append(f"{label} failed (error {call.error_code!r})")
            continue
        value, problem = tool_payload(call.result)
        if problem is not None:
            out.problems.append(f"{label}: {problem}")
            continue
        previews, limits = extract(value, label, out.document_limit)
        out.previews.extend(previews)
        if previews:
            out.result_limits.extend(limits)
