"""What the checks of the harness's own client rows share: the client-plus schema, and a recording cut
into its sessions (a new one starts at each initialize: a client that starts over after HTTP 404 gets
a fresh ID space and a fresh declaration)."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import Message, Recording, schema_errors
from conformance_packs.client.common import params_of

PLUS_ID = "urn:mcp-conformance:client-plus:1"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def plus_shape(definition: str, instance: Any) -> list[str]:
    """`instance` against the client-plus schema's `definition` (the published schemas' shape)."""
    return schema_errors(PLUS_ID, definition, instance)


def sessions(recording: Recording) -> list[list[Message]]:
    """The client's messages, one list per session: each initialize request opens the next."""
    found: list[list[Message]] = [[]]
    for message in recording.messages():
        if message.method == "initialize" and message.is_request and found[-1]:
            found.append([])
        found[-1].append(message)
    return [session for session in found if session]


def capabilities_of(session: list[Message]) -> dict[str, Any]:
    """The capabilities a session's initialize declared ({} when it has none)."""
    opened = [m for m in session if m.method == "initialize" and m.is_request]
    declared = params_of(opened[0].value).get("capabilities") if opened else None
    return declared if isinstance(declared, dict) else {}
