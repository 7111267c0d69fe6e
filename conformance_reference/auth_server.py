"""The protected reference server: the base reference server behind the `mcp` SDK's own resource-server
support, trusting the harness's test authorization server.

Why this exists: the authorization suite's embedded default (`run --suite auth` with no `--server`) must
be a deployment known to pass every row, built the way SDK users build theirs (`AuthSettings`, a
`TokenVerifier`, the SDK's bearer middleware and its RFC 9728 metadata route), so that a failing row
against it is a bug of the suite.

The token verifier is what a real deployment writes: it fetches the issuer's RFC 8414 metadata and JWKS
over HTTP, checks the signature (ES256 only), the issuer, the audience (this server's own URL, RFC 8707)
and the expiry, with joserfc. Without `--issuer` the process hosts the test authorization server itself
on another loopback port, with the key in `--key-file` (created if missing), so that the harness, given
the same file, mints the tokens this server trusts.

Run it as ``python -m conformance_reference.auth_server --http --key-file auth-key.json``; it serves
Streamable HTTP only (authorization is an HTTP matter: MCP says stdio servers should not use it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, cast

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from mcp.server import Server
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp

from conformance.infra.authority import METADATA_PATH, AuthorityServer, load_key
from conformance_reference.base_server import build_server
from conformance_reference.serving import MCP_PATH, Era, build_http_app, serve, serving_parser

__all__ = ["JwtVerifier", "main", "protected_app"]

#: The scope every MCP request needs here: a token without it is answered 403 insufficient_scope.
REQUIRED_SCOPE: Final = "mcp:tools"
#: Seconds of clock skew tolerated on `exp` and `nbf`.
LEEWAY: Final = 30


class JwtVerifier:
    """Verifies a JWT access token as an OAuth 2.1 resource server must (OAuth 2.1 section 5.2, RFC 8707).

    The JWKS is fetched from the issuer's metadata once, at the first token, then kept.
    """

    def __init__(self, issuer: str, audience: str) -> None:
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self._keys: KeySet | None = None

    async def keys(self) -> KeySet:
        if self._keys is None:
            async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
                meta = (await client.get(self.issuer + METADATA_PATH)).raise_for_status().json()
                jwks = (await client.get(meta["jwks_uri"])).raise_for_status().json()
            self._keys = KeySet.import_key_set(jwks)
        return self._keys

    def claims_registry(self) -> jwt.JWTClaimsRegistry:
        """What a token's claims must say: this issuer, this server as audience, not expired."""
        return jwt.JWTClaimsRegistry(
            leeway=LEEWAY,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.audience},
            exp={"essential": True},
        )

    async def decode(self, token: str) -> dict[str, Any]:
        """The token's claims once its signature is checked against the issuer's keys."""
        return dict(jwt.decode(token, await self.keys(), algorithms=["ES256"]).claims)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            claims = await self.decode(token)
            self.claims_registry().validate(claims)
        except (JoseError, ValueError, KeyError, TypeError):
            return None
        return self.access_token(token, claims)

    def access_token(self, token: str, claims: dict[str, Any]) -> AccessToken:
        """What the SDK's middleware is told of a verified token (it checks expiry and scope again)."""
        scope = claims.get("scope")
        expires = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("sub") or "unknown"),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(expires) if isinstance(expires, int | float) else None,
            resource=self.audience,
            subject=str(claims.get("sub")) if claims.get("sub") is not None else None,
            claims={"iss": claims.get("iss")},
        )


def protected_app(
    server: Server[Any], origin: str, issuer: str, *, era: Era = "both", verifier: JwtVerifier | None = None
) -> ASGIApp:
    """`server`'s HTTP app at `origin`, protected by the SDK's bearer middleware and RFC 9728 route."""
    resource = origin + MCP_PATH
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(issuer),
        resource_server_url=AnyHttpUrl(resource),
        required_scopes=[REQUIRED_SCOPE],
        validate_token_resource=True,
    )
    return build_http_app(
        server,
        era=era,
        auth=auth,
        token_verifier=verifier or JwtVerifier(issuer, resource),
    )


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = serving_parser(
        "python -m conformance_reference.auth_server",
        "Run the protected reference server (Streamable HTTP only).",
    )
    parser.add_argument(
        "--issuer", help="trust this authorization server instead of hosting the test one (its RFC 8414 URL)"
    )
    parser.add_argument(
        "--key-file", help="the test authorization server's key (a private JWK; created if missing)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, *, app: Callable[..., ASGIApp] | None = None) -> int:
    """CLI entry point; `app` replaces `protected_app`, with its arguments (the tests' mutants)."""
    args = _parse_args(argv)
    if not args.http:
        print("the protected reference serves Streamable HTTP only: give --http", file=sys.stderr)
        return 2
    build = app or protected_app
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-auth-") as scratch:
        issuer = args.issuer
        authority = None
        if issuer is None:
            key = load_key(args.key_file or Path(scratch) / "key.json")
            authority = AuthorityServer(key, scopes=(REQUIRED_SCOPE,))
            authority.start()
            issuer = authority.issuer
        server = build_server()
        era = cast(Era, args.era)
        try:
            return serve(server, args, app=lambda origin: build(server, origin, issuer, era=era))
        finally:
            if authority is not None:
                authority.shutdown()


if __name__ == "__main__":
    sys.exit(main())
