"""How an HTTP-style status shows in an MCP `tools/call` reply: the catalog's conventions C-1 and C-2.

The profiles speak of 409, 410, 412 and friends, but MCP has no status codes, so a server may say 409 as
a JSON-RPC error with `data.status`, as an `isError` result carrying a structured code, or only in prose.
`classify` reads a reply by C-1's ordered rules and C-2's code table and says how strong the evidence
is: a status found only by a regex over text is `weak` (the row passes with WARN weak-error-encoding).
Shared by every profile suite so that one reply is never read two ways.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

Kind = Literal["SUCCESS", "STATUS", "REJECTED_INPUT", "UNKNOWN_TOOL", "ERROR_UNCLASSIFIED", "NO_RESULT"]

#: C-2, after folding case and treating `-` and `_` alike. `BINDING_*` and `PROTO-EDIT-*` are prefixes.
CODE_TABLE: Final[dict[str, int]] = {
    "stale_revision": 409,
    "stale": 409,
    "already_decided": 409,
    "withdrawn": 409,
    "superseded": 409,
    "conflict": 409,
    "binding_deal_id_mismatch": 409,
    "expired": 410,
    "gone": 410,
    "binding_precondition_failed": 412,
    "precondition_failed": 412,
    "binding_precondition_required": 428,
    "precondition_required": 428,
    "representation_not_acceptable": 406,
    "binding_view_unavailable": 406,
    "not_acceptable": 406,
    "invalid_argument": 400,
    "validation": 400,
    "forbidden": 403,
    "permission_denied": 403,
}
PREFIXES: Final[tuple[tuple[str, int], ...]] = (("proto_edit_", 409), ("binding_", 400))
#: C-1 rule 2, the paths searched in structuredContent or the first JSON text block, in order.
PATHS: Final[tuple[tuple[str, ...], ...]] = (
    ("status",),
    ("http_status",),
    ("httpStatus",),
    ("code",),
    ("error", "code"),
    ("error", "status"),
    ("problem", "status"),
)
#: C-1's text rules, in order; a match is weak evidence.
TEXT_RULES: Final[tuple[tuple[re.Pattern[str], int], ...]] = tuple(
    (re.compile(pattern, re.IGNORECASE), status)
    for pattern, status in (
        (r"\b409\b|conflict|stale|already[ _-]decided|withdrawn", 409),
        (r"\b410\b|expired|gone", 410),
        (r"\b412\b|precondition failed", 412),
        (r"\b428\b|precondition required", 428),
        (r"\b406\b|not acceptable", 406),
        (r"\b403\b|forbidden|permission", 403),
        (r"\b404\b|not found", 404),
    )
)


@dataclass(frozen=True)
class Classification:
    """One classified reply: what kind, which status (when one maps), and how it was found."""

    kind: Kind
    status: int | None = None
    code: str | None = None
    weak: bool = False
    channel: str = ""

    @property
    def success(self) -> bool:
        return self.kind == "SUCCESS"

    def describe(self) -> str:
        if self.kind == "SUCCESS":
            return "SUCCESS"
        if self.kind == "STATUS":
            how = " (text only: weak evidence)" if self.weak else ""
            code = f" {self.code!r}" if self.code else ""
            return f"{self.status}{code} via {self.channel}{how}"
        return f"{self.kind} via {self.channel}" + (f" ({self.code})" if self.code else "")


def map_code(value: Any) -> int | None:
    """A status from a C-2 code string, or from a number that is an HTTP status."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.isdigit():
        return map_code(int(text))
    key = text.lower().replace("-", "_")
    if key in CODE_TABLE:
        return CODE_TABLE[key]
    for prefix, status in PREFIXES:
        if key.startswith(prefix):
            return status
    return None


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def first_json_text(result: dict[str, Any]) -> Any:
    """The first text block of a tool result parsed as JSON, or None."""
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                return json.loads(block["text"])
            except ValueError:
                return None
    return None


def all_text(result: dict[str, Any]) -> str:
    return "\n".join(
        block["text"]
        for block in result.get("content") or []
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def classify(response: Any) -> Classification:
    """Classify a JSON-RPC response to `tools/call` by C-1 (rules 1 to 3) and C-2."""
    if not isinstance(response, dict):
        return Classification("NO_RESULT", channel="no response")
    error = response.get("error")
    if isinstance(error, dict):
        data = error.get("data")
        for key in ("status", "http_status", "code"):
            status = map_code(_at(data, (key,)))
            if status is not None:
                return Classification(
                    "STATUS", status, _code_text(_at(data, ("code",))), channel="JSON-RPC error data"
                )
        code = error.get("code")
        if code == -32602:
            return Classification("REJECTED_INPUT", code=str(code), channel="JSON-RPC error")
        if code == -32601:
            return Classification("UNKNOWN_TOOL", code=str(code), channel="JSON-RPC error")
        return Classification("ERROR_UNCLASSIFIED", code=str(code), channel="JSON-RPC error")
    result = response.get("result")
    if not isinstance(result, dict):
        return Classification("NO_RESULT", channel="neither result nor error")
    if result.get("isError") is not True:
        return Classification("SUCCESS", channel="result")
    for source, where in (
        (result.get("structuredContent"), "structuredContent"),
        (first_json_text(result), "text JSON"),
    ):
        if not isinstance(source, dict):
            continue
        for path in PATHS:
            status = map_code(_at(source, path))
            if status is not None:
                code = _code_text(_at(source, ("code",))) or _code_text(_at(source, ("error", "code")))
                return Classification("STATUS", status, code, channel=f"isError {where} {'.'.join(path)}")
    text = all_text(result)
    for pattern, status in TEXT_RULES:
        match = pattern.search(text)
        if match:
            return Classification("STATUS", status, match.group(0), weak=True, channel="isError text")
    return Classification("ERROR_UNCLASSIFIED", channel="isError result")


def _code_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
