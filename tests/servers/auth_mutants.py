"""The protected reference server with one planted defect each (`--defect NAME`), for test_auth_suite.

Each defect is a mistake real resource servers make: a verifier that skips one validation step, or an
HTTP layer that loses or bends what the SDK's bearer middleware answers. Everything else is the
reference (`conformance_reference.auth_server`) as it is.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any
from urllib.parse import parse_qsl, urlencode

from joserfc import jwt
from mcp.server import Server
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference.auth_server import REQUIRED_SCOPE, JwtVerifier, main, protected_app
from conformance_reference.serving import MCP_PATH, Era

DEFECTS = {
    "none": "conformant",
    "any-audience": "accepts a token issued for another resource (no audience check)",
    "accept-expired": "accepts an expired token",
    "any-issuer": "accepts a token from any issuer (no issuer check)",
    "any-key": "accepts a token whatever key signed it (no signature check)",
    "no-challenge": "answers 401 without WWW-Authenticate",
    "wrong-resource": "serves protected resource metadata whose resource is another server",
    "query-token": "also accepts the token as access_token in the query string",
    "scope-401": "answers a token of too small a scope with 401 instead of 403",
    "scope-no-error": 'answers too small a scope 403 with a challenge that has no error (Bearer scope="...")',
    "scope-ignored": "serves a valid token whatever its scope, though its metadata lists mcp:tools",
    "no-token-needed": "serves every request, with any token or none (its metadata still names its issuer)",
    "no-token-403": "answers a request without a token with 403 instead of 401",
}


class _AnyAudience(JwtVerifier):
    def claims_registry(self) -> jwt.JWTClaimsRegistry:
        return jwt.JWTClaimsRegistry(iss={"essential": True, "value": self.issuer}, exp={"essential": True})


class _AnyIssuer(JwtVerifier):
    def claims_registry(self) -> jwt.JWTClaimsRegistry:
        return jwt.JWTClaimsRegistry(aud={"essential": True, "value": self.audience}, exp={"essential": True})


class _AcceptExpired(JwtVerifier):
    def claims_registry(self) -> jwt.JWTClaimsRegistry:
        return jwt.JWTClaimsRegistry(
            leeway=10**9,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.audience},
        )

    def access_token(self, token: str, claims: dict[str, Any]) -> AccessToken:
        return super().access_token(token, claims).model_copy(update={"expires_at": None})


class _AnyKey(JwtVerifier):
    async def decode(self, token: str) -> dict[str, Any]:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if not isinstance(claims, dict):
            raise ValueError("no claims")
        return claims


class _ScopeIgnored(JwtVerifier):
    """Checks everything but the scope: every verified token is told to carry the one the server needs."""

    def access_token(self, token: str, claims: dict[str, Any]) -> AccessToken:
        return super().access_token(token, claims).model_copy(update={"scopes": [REQUIRED_SCOPE]})


class _AnyToken(JwtVerifier):
    """Checks nothing: any string is a token with every scope the server needs."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="anyone", scopes=[REQUIRED_SCOPE], resource=self.audience)


def _no_token_needed(app: ASGIApp) -> ASGIApp:
    """`app` serving a request without a token as if it carried one (`_AnyToken` takes any)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(k.lower() == b"authorization" for k, _ in scope["headers"]):
            scope = {**scope, "headers": [*scope["headers"], (b"authorization", b"Bearer anonymous")]}
        await app(scope, receive, send)

    return wrapped


VERIFIERS: dict[str, type[JwtVerifier]] = {
    "scope-ignored": _ScopeIgnored,
    "no-token-needed": _AnyToken,
    "any-audience": _AnyAudience,
    "any-issuer": _AnyIssuer,
    "accept-expired": _AcceptExpired,
    "any-key": _AnyKey,
}


def _rewrite_status(
    app: ASGIApp, *, drop_challenge_on: int | None = None, status_map: dict[int, int] | None = None
) -> ASGIApp:
    """`app` with the status or WWW-Authenticate header of its answers changed."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def edit(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                if status == drop_challenge_on:
                    headers = [(k, v) for k, v in headers if k.lower() != b"www-authenticate"]
                message = {**message, "status": (status_map or {}).get(status, status), "headers": headers}
            await send(message)

        await app(scope, receive, edit)

    return wrapped


def _challenge_without_error(app: ASGIApp) -> ASGIApp:
    """`app` whose 403 challenge names the scope needed but no error."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def edit(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 403:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"www-authenticate"]
                headers.append((b"www-authenticate", f'Bearer scope="{REQUIRED_SCOPE}"'.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, edit)

    return wrapped


def _no_token_status(app: ASGIApp, status: int) -> ASGIApp:
    """`app` answering a request without an Authorization header with `status` where it says 401."""
    rewritten = _rewrite_status(app, status_map={401: status})

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        bare = scope["type"] == "http" and not any(k.lower() == b"authorization" for k, _ in scope["headers"])
        await (rewritten if bare else app)(scope, receive, send)

    return wrapped


def _query_token(app: ASGIApp) -> ASGIApp:
    """`app` taking `?access_token=` as if it were the Authorization header."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("query_string"):
            query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
            token = query.pop("access_token", None)
            if token:
                headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
                headers.append((b"authorization", b"Bearer " + token.encode("latin-1")))
                scope = {**scope, "headers": headers, "query_string": urlencode(query).encode("latin-1")}
        await app(scope, receive, send)

    return wrapped


def _wrong_resource(app: ASGIApp, issuer: str) -> ASGIApp:
    """`app` whose protected resource metadata names another server as its resource."""
    document = json.dumps(
        {
            "resource": "https://elsewhere.invalid/mcp",
            "authorization_servers": [issuer],
            "scopes_supported": ["mcp:tools"],
        }
    ).encode()

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/oauth-protected-resource"):
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(document)).encode()),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": document})
            return
        await app(scope, receive, send)

    return wrapped


def build(defect: str) -> Any:
    def app(server: Server[Any], origin: str, issuer: str, *, era: Era = "both") -> ASGIApp:
        verifier_cls = VERIFIERS.get(defect, JwtVerifier)
        base = protected_app(
            server, origin, issuer, era=era, verifier=verifier_cls(issuer, origin + MCP_PATH)
        )
        if defect == "no-challenge":
            return _rewrite_status(base, drop_challenge_on=401)
        if defect == "scope-401":
            return _rewrite_status(base, status_map={403: 401})
        if defect == "no-token-403":
            return _no_token_status(base, 403)
        if defect == "query-token":
            return _query_token(base)
        if defect == "scope-no-error":
            return _challenge_without_error(base)
        if defect == "no-token-needed":
            return _no_token_needed(_query_token(base))
        if defect == "wrong-resource":
            return _wrong_resource(base, issuer)
        return base

    return app


if __name__ == "__main__":
    argv = sys.argv[1:]
    defect = "none"
    if "--defect" in argv:
        at = argv.index("--defect")
        defect = argv[at + 1]
        del argv[at : at + 2]
    if defect not in DEFECTS:
        raise SystemExit(f"unknown defect {defect!r}; one of {', '.join(DEFECTS)}")
    sys.exit(main(argv, app=build(defect)))
