"""What the client pack's checks share: its message schemas and reading a message's members."""

from __future__ import annotations

import json
from typing import Any

from conformance.pack_api import ClientContext, Message, schema_errors, weak

MESSAGES_ID = "urn:mcp-conformance:client-messages:1"


def shape(definition: str, instance: Any) -> list[str]:
    """`instance` against the client-messages schema's `definition` (the published schemas' shape)."""
    return schema_errors(MESSAGES_ID, definition, instance)


def params_of(value: Any) -> dict[str, Any]:
    params = value.get("params") if isinstance(value, dict) else None
    return params if isinstance(params, dict) else {}


def sent(ctx: ClientContext, *, requests_only: bool) -> list[Message]:
    """The client's requests (and, unless `requests_only`, notifications). None at all is SKIP blocked
    by the contract case when the client failed it, else WARN: nothing the row is about was sent."""
    found = [m for m in ctx.recording.messages() if (m.is_request if requests_only else m.method is not None)]
    if not found:
        ctx.unless_failed("the client sent no request")
        weak("the client sent no request at all, though the scenario asks it to")
    return found


def shown(value: Any) -> str:
    """A value in a message as JSON (`null`, `"text"`, `[5, 3]`), never a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)
