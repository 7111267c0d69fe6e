"""The Durable Workflow MCP discovery profile (seed 001, `durable-workflow.v2.mcp-discovery`, catalog 13).

Its check modules, in report order: where the document is served, its schema validity
(one check per DWD-DOC row, plus version skew), the cross-check with the live server, then payload
previews. Every check runs once per target (`once=True`): the document does not depend on the MCP
revision. Settings come from the `[dw-discovery]` table of a TOML target file; see `locate`.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="dw-discovery",
    package=__name__,
    description=(
        "Durable Workflow MCP discovery profile: the discovery document, its live cross-check, previews"
    ),
    checks=tuple(f"{__name__}.{module}" for module in ("serve", "doc", "live", "preview")),
    reference="conformance_reference.dw_server",
    reference_forkserver="conformance_reference.forkserver",
    since="2025-06-18",
    settings={"dw-discovery": "urn:mcp-conformance:dw-discovery-target:1"},
    order=10,
)
