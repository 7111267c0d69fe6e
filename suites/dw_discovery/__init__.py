"""The Durable Workflow MCP discovery profile (seed 001, `durable-workflow.v2.mcp-discovery`, catalog 13).

Importing it registers its checks in report order: where the document is served, its schema validity
(one check per DWD-DOC row, plus version skew), the cross-check with the live server, then payload
previews. Every check runs once per target (`once=True`): the document does not depend on the MCP
revision. Settings come from the `[dw-discovery]` table of a TOML target file; see `locate`.
"""

from suites.dw_discovery import serve, doc, live, preview  # noqa: F401, I001
