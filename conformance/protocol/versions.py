"""The protocol revisions the harness knows, which era each belongs to, and what each revision has.

Kept as plain data (no SDK import) so that `--help`, `list` and `explain` start fast. A check or a
shape that exists only from some revision on asks `at_least(revision, FIRST)` with one of the
constants below, so that no revision is judged by a later revision's rules.
"""

from __future__ import annotations

from typing import Any, Final, Literal

Era = Literal["legacy", "modern"]

#: Revisions opened with the `initialize` handshake, oldest first.
LEGACY_REVISIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_REVISIONS: Final = ("2026-07-28",)
#: Newest first: the order in which `--protocol auto` probes.
TESTED_REVISIONS: Final = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

#: 2025-03-26 added JSON-RPC batches and 2025-06-18 removed them (changelogs of both revisions).
BATCH_REVISIONS: Final = frozenset({"2025-03-26"})
#: Tool annotations (`readOnlyHint` and the other hints): 2025-03-26 changelog, "Added ... tool annotations".
FIRST_TOOL_ANNOTATIONS: Final = "2025-03-26"
#: structuredContent, outputSchema and `title`: 2025-06-18 changelog, major change 2 and schema change 3.
FIRST_STRUCTURED_OUTPUT: Final = "2025-06-18"
#: The MCP-Protocol-Version header on HTTP requests after initialize: 2025-06-18 changelog, change 8.
FIRST_PROTOCOL_HEADER: Final = "2025-06-18"
#: JSON Schema 2020-12 as the dialect of a schema without `$schema`: 2025-11-25 (SEP-1613); before it
#: MCP names no dialect (its own schema.json is draft-07).
FIRST_DEFAULT_DIALECT: Final = "2025-11-25"
#: The tool naming rules (1 to 128 characters of A-Z a-z 0-9 _ - .): 2025-11-25 server/tools.
FIRST_TOOL_NAME_RULES: Final = "2025-11-25"

#: The HTTP transport each revision defines: 2024-11-05 has only HTTP+SSE, 2025-03-26 replaced it
#: with Streamable HTTP (2025-03-26 changelog, major change 2). stdio is in every revision.
HTTP_TRANSPORT_OF: Final = {"2024-11-05": "sse"}

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


def is_known(revision: object) -> bool:
    return isinstance(revision, str) and revision in TESTED_REVISIONS


def at_least(revision: str, first: str) -> bool:
    """Whether known `revision` is `first` or later (revisions are dates, so they order as text)."""
    return revision >= first


def since(first: str) -> tuple[str, ...]:
    """The known revisions from `first` on, for a check's `revisions=`."""
    return tuple(r for r in TESTED_REVISIONS if at_least(r, first))


def transport_mismatch(revision: str, transport: str) -> str | None:
    """Why `revision` cannot be spoken over `transport`, or None when the revision defines it.

    A Streamable HTTP endpoint does not speak 2024-11-05 (whose HTTP transport is HTTP+SSE), so
    that revision is not probed there: a reason to report, not a failure of the server.
    """
    if transport in ("stdio", "sse"):
        # HTTP+SSE stayed deployed after 2025-03-26 deprecated it; every revision runs over it.
        return None
    wanted = HTTP_TRANSPORT_OF.get(revision, "http")
    if wanted != transport:
        return (
            f"{revision} defines no Streamable HTTP transport (its HTTP transport is HTTP+SSE: "
            f"point the harness at the server's SSE endpoint with sse:URL)"
        )
    return None


#: The name the harness gives itself as an MCP client (`clientInfo`, with its version).
CLIENT_NAME: Final = "mcp-conformance"


def initialize_params(revision: str, capabilities: dict[str, Any], version: str) -> dict[str, Any]:
    """The params of the legacy `initialize` the harness sends (`protocol.session.Session.open`):
    offering `revision`, declaring `capabilities`, the harness as client. One copy, so a case's
    reproduction (`reporting.reproduce`) opens a session exactly as the run did."""
    return {
        "protocolVersion": revision,
        "capabilities": capabilities,
        "clientInfo": {"name": CLIENT_NAME, "version": version},
    }
