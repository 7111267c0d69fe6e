"""JSON-RPC 2.0 framing: building requests and classifying what came back, without judging it.

The harness keeps the exact bytes of every message; this module only gives them a structure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

Kind = Literal["request", "notification", "response", "error", "invalid", "garbage"]


@dataclass(frozen=True)
class Frame:
    """One message as it arrived: exact bytes, the parsed value (if any) and what kind of message it is."""

    raw: bytes
    value: Any = None
    kind: Kind = "garbage"
    problem: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> Any:
        return self.value.get("id") if isinstance(self.value, dict) else None

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")


def classify(raw: bytes) -> Frame:
    """Parse one message. Never raises: garbage and invalid envelopes become frames of their own kind."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Frame(raw, None, "garbage", f"invalid UTF-8 at byte {exc.start}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return Frame(raw, None, "garbage", f"not JSON: {exc}")
    return Frame(raw, value, kind_of(value), "")


def kind_of(value: Any) -> Kind:
    """Name the kind of a decoded message by its members, tolerating a wrong `jsonrpc` (judged elsewhere).

    A batch of notifications (2025-03-26 allows JSON-RPC batches) answers no request, so it is a
    notification too: it must never be taken for the answer a request waits for.
    """
    if isinstance(value, list) and value and all(kind_of(item) == "notification" for item in value):
        return "notification"
    if not isinstance(value, dict):
        return "invalid"
    if "method" in value:
        return "request" if "id" in value else "notification"
    if "error" in value and "result" not in value:
        return "error"
    if "result" in value and "error" not in value:
        return "response"
    return "invalid"


def request(msg_id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON, the form the harness puts on the wire."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
