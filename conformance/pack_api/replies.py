"""A request answered and read by the catalog's conventions: the profiles' one way to send a call, time it
and classify its outcome (C-1, `conformance.pack_api.statuses.classify`).

The MAP and UW profiles both send `tools/call` (UW `resources/read` too), compare when each was sent and
answered (the races), and judge the C-1 outcome; this is that mechanism once, so one reply is never
read two ways.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.engine.checks import Evidence, unjudgeable
from conformance.pack_api.statuses import Classification, classify, first_json_text
from conformance.protocol.session import Call, Session

if TYPE_CHECKING:
    from conformance.engine.context import CaseContext


@dataclass
class Reply:
    """One request with its C-1 outcome and when it was sent and answered (monotonic seconds)."""

    call: Call
    outcome: Classification
    sent: float
    received: float

    @property
    def result(self) -> dict[str, Any]:
        value = self.call.result
        return value if isinstance(value, dict) else {}

    @property
    def structured(self) -> Any:
        """structuredContent of a successful result, else the first JSON text block (or None)."""
        value = self.result.get("structuredContent")
        return value if value is not None else first_json_text(self.result)

    @property
    def sc(self) -> dict[str, Any]:
        """structuredContent when it is an object, else {}."""
        value = self.result.get("structuredContent")
        return value if isinstance(value, dict) else {}

    @property
    def success(self) -> bool:
        return self.outcome.success

    @property
    def refused(self) -> bool:
        """Not SUCCESS: an error of any kind, or an HTTP 4xx that carried no JSON-RPC answer."""
        return not self.outcome.success

    def raw(self) -> str:
        frame = self.call.reply.response
        return frame.text if frame is not None else ""

    def links(self) -> list[dict[str, Any]]:
        return [
            block
            for block in self.result.get("content") or []
            if isinstance(block, dict) and block.get("type") == "resource_link"
        ]

    def excerpt(self) -> Evidence:
        return {**self.call.excerpt(), "outcome": self.outcome.describe()}


async def classified(
    ctx: CaseContext,
    method: str,
    params: dict[str, Any],
    session: Session | None = None,
    timeout: float | None = None,
    *,
    http_refusal: bool = False,
) -> Reply:
    """One request on the shared session (or `session`), timed and classified; a transport failure
    propagates (ERROR). An answer with neither a result nor an error cannot be judged (ERROR), unless
    `http_refusal` lets an HTTP 4xx without a JSON-RPC answer stand as a refusal (the UW binding's
    HTTP-style statuses)."""
    sent = time.monotonic()
    if session is None:
        call = await ctx.request(method, params, timeout=timeout)
    else:
        call = await session.request(method, params, timeout=timeout)
        ctx.calls.append(call)
    received = time.monotonic()
    outcome = classify(call.response)
    if outcome.kind == "NO_RESULT" and not (http_refusal and 400 <= (call.reply.status or 0) < 500):
        unjudgeable(f"{method} was answered with neither a result nor an error", **call.excerpt())
    return Reply(call, outcome, sent, received)
