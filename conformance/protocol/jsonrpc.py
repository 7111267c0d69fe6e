"""JSON-RPC 2.0 framing: building requests and classifying what came back, without judging it.

The harness keeps the exact bytes of every message; this module only gives them a structure.
"""

from __future__ import annotations

import json
import re
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
#: The code LSP gives an answer to a cancelled request ("RequestCancelled"): MCP defines none, but SDKs
#: answer a cancelled call with it, so it names the cancellation in an error.
REQUEST_CANCELLED = -32800

#: The most JSON values (containers, strings, numbers, literals) one message may hold to be parsed. A
#: parsed value costs 30 to 70 bytes of Python objects, so a message under the 16 MB cap made of
#: `[[],[],...]` (5.6 million empty arrays) would cost the harness some 400 MB; one million values
#: bound that to about 70 MB, and no MCP message a client needs comes near it (a 16 MB text or blob is
#: one value).
MAX_VALUES = 1_000_000
#: A JSON string once its escaped backslashes and quotes are gone: what `values_in` replaces by `0`.
_BARE_STRING = re.compile(rb'"[^"]*"')
_DELIMITERS = (b"[", b"{", b",", b":")
_EMPTY = (b"[]", b"{}")


def values_in(raw: bytes) -> int:
    """An upper bound on the number of JSON values in `raw`, close enough to bound parsing.

    Every value but the outermost follows a `[`, `{`, `,` or `:`, and an empty `[]` or `{}` holds none,
    so one plus the delimiters less the empty pairs bounds the values (object keys counted). That is a
    few passes of `bytes.count`. Only a message whose count passes `MAX_VALUES` is looked at closer,
    with its escaped backslashes and quotes dropped so that a string is a plain `"..."`: past
    `MAX_VALUES` strings it is over the cap as it stands (each string is a value); otherwise each string
    is replaced by a `0` (its commas and brackets are text, not values) and it is counted again, which
    is exact for compact JSON.
    """
    count = _delimited(raw)
    if count <= MAX_VALUES:
        return count
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    strings = plain.count(b'"') // 2
    if strings > MAX_VALUES:
        return strings
    return _delimited(_BARE_STRING.sub(b"0", plain))  # `0`, not nothing: `["a"]` must not become `[]`


def _delimited(data: bytes) -> int:
    return 1 + sum(data.count(d) for d in _DELIMITERS) - sum(data.count(e) for e in _EMPTY)


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

    @property
    def idless_reply(self) -> bool:
        """A reply with no id to match: see `idless_reply`."""
        return idless_reply(self.value)


def idless_reply(value: Any) -> bool:
    """A reply (a result or an error, no method) whose id is absent or null: it answers no request the
    harness numbered.

    Why: JSON-RPC 2.0 (section 5) gives a response the id of the request it answers, null only where
    that id could not be read (a parse error, an invalid request), and MCP 2025-11-25 on lets an error
    omit it. So such a reply answers a notification (which the receiver MUST NOT answer) or a message
    whose id the server could not read, never an outstanding request: pairing it with one would hide
    the fault and put a wrong answer in a case's mouth.
    """
    return (
        isinstance(value, dict)
        and "method" not in value
        and ("result" in value or "error" in value)
        and value.get("id") is None
    )


def classify(raw: bytes) -> Frame:
    """Parse one message. Never raises: garbage and invalid envelopes become frames of their own kind.

    A message of more than `MAX_VALUES` JSON values is not parsed: its frame is garbage with
    `extra["oversize"]`, which the adapters turn into the request's ERROR, as for one over the byte cap;
    so is one nested deeper than the parser's recursion reaches (`extra["depth"]`).
    """
    if len(raw) > MAX_VALUES and (values := values_in(raw)) > MAX_VALUES:
        problem = f"a message of over {MAX_VALUES} JSON values (counted {values}) exceeded the harness's cap"
        return Frame(raw, None, "garbage", problem + "; not parsed", {"oversize": len(raw), "values": values})
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Frame(raw, None, "garbage", f"invalid UTF-8 at byte {exc.start}")
    try:
        value = json.loads(text)
    except ValueError as exc:
        return Frame(raw, None, "garbage", f"not JSON: {exc}")
    except RecursionError:
        # JSON sets no depth limit, and a parser may (RFC 8259, section 9): the harness's, like its size
        # caps, makes this an answer it cannot read, not one that breaks a rule.
        problem = "a message nested deeper than the harness's JSON parser reads exceeded the harness's cap"
        return Frame(raw, None, "garbage", problem + "; not parsed", {"oversize": len(raw), "depth": True})
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
