"""The client pack: what an MCP client sends, judged against the scenario servers the harness plays.

Its scenarios are the official suite's client scenarios, by their contract names (`scenarios.py`), so
a client program written for `@modelcontextprotocol/conformance` runs here unchanged; its checks read
the exact bytes the client sent (`lifecycle.py`, `tools.py`, ...). `mcp-conformance client` runs it
(docs/client.md); `run` never does (`side="client"`).
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="client",
    package=__name__,
    description="MCP clients: the official client scenarios and the client's obligations, over HTTP, "
    "HTTP+SSE and stdio",
    checks=(
        f"{__name__}.contract",
        f"{__name__}.lifecycle",
        f"{__name__}.tools",
        f"{__name__}.elicitation",
        f"{__name__}.sse",
        f"{__name__}.metadata",
        f"{__name__}.headers",
        f"{__name__}.mrtr",
        f"{__name__}.custom_headers",
        f"{__name__}.schemas_kept",
        f"{__name__}.hygiene",
        f"{__name__}.sessions",
        f"{__name__}.features",
        f"{__name__}.auth_checks",
        f"{__name__}.auth_rules",
        f"{__name__}.auth_refusals",
        f"{__name__}.auth_extensions",
        f"{__name__}.auth_enterprise",
        f"{__name__}.auth_wif",
    ),
    reference="conformance_reference.client",
    side="client",
    order=200,
)
