"""What the server sent, read back from the wire log: the notifications that no request's answer carries.

Why from the wire log: a notification can arrive between two exchanges (stdio's progress after a
response, a listen stream's updates), where no `Call` holds it; the log holds every message received,
in order, whatever the transport, so a check can tell what came before and after an answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformance.pack_api import Call, CaseContext, Session, jsonrpc

#: The _meta key of 2026-07-28 that ties a notification to its subscriptions/listen request.
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@dataclass(frozen=True)
class Received:
    """One message the server sent, parsed, with its place in the wire log."""

    index: int
    value: dict[str, Any]

    @property
    def method(self) -> str:
        method = self.value.get("method")
        return method if isinstance(method, str) else ""

    @property
    def params(self) -> dict[str, Any]:
        params = self.value.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def is_answer(self) -> bool:
        return "method" not in self.value and ("result" in self.value or "error" in self.value)

    def answers(self, request_id: Any) -> bool:
        return self.is_answer and self.value.get("id") == request_id

    @property
    def subscription(self) -> Any:
        """The listen subscription id this message is tagged with (None when untagged)."""
        meta = self.params.get("_meta")
        if self.is_answer:
            result = self.value.get("result")
            meta = result.get("_meta") if isinstance(result, dict) else None
        return meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None

    def text(self, limit: int = 400) -> str:
        return json.dumps(self.value, ensure_ascii=False)[:limit]


def _objects(entries: list[dict[str, Any]], direction: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, object) for every JSON object in `entries` going `direction` ("recv" or "send"), batches
    unpacked; lines that are not JSON are left to the stdout and HTTP rows."""
    for index, entry in enumerate(entries):
        if entry.get("dir") != direction or not isinstance(entry.get("text"), str):
            continue
        try:
            value = json.loads(entry["text"])
        except ValueError:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                yield index, item


def received_since(ctx: CaseContext, mark: int) -> list[Received]:
    """Every JSON object the server sent since `mark`, in the order it arrived (batches unpacked)."""
    return [Received(index, item) for index, item in _objects(ctx.wire_since(mark), "recv")]


def ids_sent_before(ctx: CaseContext, mark: int) -> set[str]:
    """The ids of the requests the harness sent before `mark` (as JSON text, so 1 and "1" differ): an
    answer with one of them that arrives later is late (or repeated), not an answer to what came after."""
    return {
        json.dumps(item["id"])
        for _, item in _objects(ctx.wire_log()[:mark], "send")
        if isinstance(item.get("method"), str) and "id" in item
    }


def sentinel_method(ctx: CaseContext) -> str:
    """The request every server of the era must answer: ping (legacy), server/discover (2026-07-28)."""
    return "server/discover" if ctx.era == "modern" else "ping"


async def sentinel(ctx: CaseContext) -> Call:
    """Send the era's sentinel request and wait for its answer (what arrived before it is in the log)."""
    return await ctx.request(sentinel_method(ctx))


def raw_request(session: Session, request_id: Any, method: str, params: dict[str, Any]) -> bytes:
    """The bytes of a request shaped for the session's era (2026-07-28: the `_meta` envelope), for
    `Session.probe`, which sends a request whose answer may not come before the next exchange."""
    params = dict(params)
    if session.era == "modern":
        params["_meta"] = {**session.meta(), **params.get("_meta", {})}
    return jsonrpc.encode(jsonrpc.request(request_id, method, params))
