"""The authorization-server pack: an OAuth 2.1 authorization server judged as MCP's authorization pages
(2025-06-18, 2025-11-25, 2026-07-28) and the RFCs they cite require it: its metadata at the well-known
URIs, the authorization code grant with PKCE driven with no browser, RFC 8707 resources, refresh token
rotation, RFC 7591 registration and client ID metadata documents, and RFC 6749's error answers.

It speaks no MCP: `mcp-conformance authorization --url ISSUER` runs it (`conformance.engine.issuer`),
and with no --url against the harness's own test authorization server. docs/authorization-server.md.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="authorization-server",
    package=__name__,
    description="OAuth 2.1 authorization servers: metadata, code grant, PKCE, resources, refresh, DCR, CIMD",
    checks=(f"{__name__}.checks_metadata", f"{__name__}.checks_grant"),
    since="2025-06-18",
    order=45,
    side="authorization-server",
)
