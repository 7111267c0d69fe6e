"""The authorization suite: a protected MCP server judged as an OAuth 2.1 resource server.

Streamable HTTP targets only (MCP's authorization is an HTTP matter; stdio targets are not judged). The
suite mints its tokens with the key of the harness's test authorization server
(`conformance.infra.authority`),
which the target must trust, or takes a real token from the environment (`[auth]`, docs/auth.md).
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="auth",
    package=__name__,
    description="Authorization: 401 challenges, RFC 9728 metadata, audience, expiry, issuer, key, scope",
    checks=(f"{__name__}.checks",),
    reference="conformance_reference.auth_server",
    reference_forkserver="conformance_reference.forkserver",
    since="2025-06-18",
    settings={"auth": "urn:mcp-conformance:auth-target:1"},
    order=40,
    prepare=f"{__name__}.credentials:prepare",
    reference_setup=f"{__name__}.credentials:reference_setup",
    reference_transports=("http",),
)
