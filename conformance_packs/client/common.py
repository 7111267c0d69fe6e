"""What the client pack's checks share: its message schemas and reading a message's members."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import schema_errors

MESSAGES_ID = "urn:mcp-conformance:client-messages:1"


def shape(definition: str, instance: Any) -> list[str]:
    """`instance` against the client-messages schema's `definition` (the published schemas' shape)."""
    return schema_errors(MESSAGES_ID, definition, instance)


def params_of(value: Any) -> dict[str, Any]:
    params = value.get("params") if isinstance(value, dict) else None
    return params if isinstance(params, dict) else {}
