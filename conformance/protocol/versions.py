"""The protocol revisions the harness knows, and which era each belongs to.

Kept as plain data (no SDK import) so that `--help`, `list` and `explain` start fast.
"""

from __future__ import annotations

from typing import Final, Literal

Era = Literal["legacy", "modern"]

LEGACY_REVISIONS: Final = ("2025-06-18", "2025-11-25")
MODERN_REVISIONS: Final = ("2026-07-28",)
#: Newest first: the order in which `--protocol auto` probes.
TESTED_REVISIONS: Final = ("2026-07-28", "2025-11-25", "2025-06-18")

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"


def era_of(revision: str) -> Era:
    """Return the era of a known revision; raise ValueError for an unknown one."""
    if revision in MODERN_REVISIONS:
        return "modern"
    if revision in LEGACY_REVISIONS:
        return "legacy"
    raise ValueError(f"unknown protocol revision {revision!r}; known: {', '.join(TESTED_REVISIONS)}")
