"""The authorization side of an OAuth client scenario: the protected resource's metadata, one or more
authorization servers (RFC 8414 or OIDC metadata, the authorization endpoint that redirects at once,
the token endpoint, dynamic registration) and the challenge an MCP request without a good token gets.

Why not the core's test authorization server (`conformance.infra.authority`, its grants): that one is
the reference an authorization server is judged against, strict by design (a request without PKCE, an
unknown client or a wrong secret is refused). A client scenario must instead let the client go on as
far as it will, so that every row can read what it sent (the official scenario server is as lenient),
and must misbehave on purpose per scenario (a wrong `iss`, a poisoned metadata issuer, a resource that
names another server). Nothing is judged here: it answers, and the scenario records every request raw.
"""

from __future__ import annotations

import base64
import itertools
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

#: The authorization code every authorization answer carries is `code-N`; tokens are `token-N`.
WELL_KNOWN_AS = "/.well-known/oauth-authorization-server"
WELL_KNOWN_OIDC = "/.well-known/openid-configuration"
WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
#: The issuer a poisoned metadata document names, and the one a wrong `iss` names.
ATTACKER_ISSUER = "https://attacker.example.com"
EVIL_ISSUER = "https://evil.example.com"


@dataclass(frozen=True)
class AuthServer:
    """One authorization server of a scenario, as its metadata describes it and as it misbehaves."""

    #: Its issuer's path on the scenario's origin ("" or "/tenant1").
    prefix: str = ""
    #: Where its metadata document is served: RFC 8414 path insertion, or OIDC (None: nowhere, the
    #: 2025-03-26 fallback to default endpoints).
    metadata_path: str | None = WELL_KNOWN_AS
    #: The path its endpoints are under, when not the issuer's (2025-03-26: `/oauth`).
    endpoints: str | None = None
    openid: bool = False
    scopes: tuple[str, ...] | None = None
    auth_methods: tuple[str, ...] = ("none",)
    cimd: bool | None = None
    registration: bool = True
    #: RFC 9207: whether the metadata advertises `iss` (None: not said), and what the redirect carries:
    #: "correct", "wrong", "omit", or "normalized" (the issuer with a trailing slash).
    iss_supported: bool | None = True
    iss_in_redirect: str = "correct"
    #: The `issuer` the metadata names, when not its own (a poisoned document).
    metadata_issuer: str | None = None
    #: Refresh tokens are issued when `offline_access` was asked for.
    refresh: bool = False
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")

    def issuer(self, base: str) -> str:
        return base + self.prefix

    @property
    def at(self) -> str:
        """The path prefix of its authorization, token and registration endpoints."""
        return self.prefix if self.endpoints is None else self.endpoints

    def metadata(self, base: str) -> dict[str, Any]:
        own = base + self.at
        document: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer(base),
            "authorization_endpoint": own + "/authorize",
            "token_endpoint": own + "/token",
            "response_types_supported": ["code"],
            "grant_types_supported": list(self.grant_types),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": list(self.auth_methods),
        }
        if self.registration:
            document["registration_endpoint"] = own + "/register"
        if self.iss_supported is not None:
            document["authorization_response_iss_parameter_supported"] = self.iss_supported
        if self.scopes is not None:
            document["scopes_supported"] = list(self.scopes)
        if self.cimd is not None:
            document["client_id_metadata_document_supported"] = self.cimd
        if self.openid:
            document |= {"jwks_uri": own + "/jwks.json", "subject_types_supported": ["public"]}
            document["id_token_signing_alg_values_supported"] = ["ES256"]
        return document

    def iss_param(self, base: str) -> str | None:
        """The `iss` the authorization response carries, or None."""
        issuer = self.metadata_issuer or self.issuer(base)
        return {
            "correct": issuer,
            "wrong": EVIL_ISSUER,
            "normalized": issuer + "/",
        }.get(self.iss_in_redirect)


@dataclass
class Answer:
    """What an endpoint answers: status, headers and a JSON body (or none)."""

    status: int
    body: Any = None
    headers: dict[str, str] | None = None

    def encoded(self) -> tuple[int, dict[str, str], bytes]:
        headers = dict(self.headers or {})
        if self.body is None:
            return self.status, headers, b""
        return self.status, {"Content-Type": "application/json", **headers}, json.dumps(self.body).encode()


def form(body: bytes) -> dict[str, str]:
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(client_id, secret) of an HTTP Basic Authorization header, or None."""
    if not header or not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    return (client_id, secret) if colon else None


class Grants:
    """The codes and tokens the scenario's authorization servers gave, each with what it was for."""

    def __init__(self) -> None:
        self.numbers = itertools.count(1)
        #: code -> (server index, scope asked for)
        self.codes: dict[str, tuple[int, str]] = {}
        #: token -> (server index, scopes it carries)
        self.tokens: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.clients: dict[str, int] = {}

    def authorize(self, index: int, server: AuthServer, base: str, query: dict[str, str]) -> Answer:
        """Approve at once: redirect to the client's redirect_uri with a code, its state and `iss`."""
        redirect = query.get("redirect_uri", "")
        if not urlsplit(redirect).scheme:
            return Answer(400, {"error": "invalid_request", "error_description": "no redirect_uri"})
        code = f"code-{next(self.numbers)}"
        self.codes[code] = (index, query.get("scope", ""))
        params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        iss = server.iss_param(base)
        if iss is not None:
            params["iss"] = iss
        joiner = "&" if "?" in redirect else "?"
        return Answer(302, None, {"Location": redirect + joiner + urlencode(params)})

    def token(self, index: int, server: AuthServer, fields: dict[str, str]) -> Answer:
        """A token for a code (or a refresh token) of this server; the scope is the one asked for."""
        grant = fields.get("grant_type")
        if grant == "authorization_code" and fields.get("code") in self.codes:
            _, scope = self.codes.pop(fields["code"])
            scope = fields.get("scope") or scope
        elif grant == "refresh_token" and fields.get("refresh_token", "").startswith("refresh-"):
            scope = fields.get("scope", "")
        elif grant == "client_credentials" and grant in server.grant_types:
            scope = fields.get("scope", "")  # the client's authentication is what the rows judge
        else:
            return Answer(400, {"error": "invalid_grant"})
        return self.issue(index, server, scope)

    def issue(self, index: int, server: AuthServer, scope: str) -> Answer:
        """A new access token of server `index` carrying `scope` (a refresh token too when the server
        gives them and `offline_access` was asked for): the token response of every grant."""
        token = f"token-{next(self.numbers)}"
        scopes = tuple(scope.split())
        self.tokens[token] = (index, scopes)
        body: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        if scopes:
            body["scope"] = " ".join(scopes)
        if server.refresh and "offline_access" in scopes:
            body["refresh_token"] = f"refresh-{next(self.numbers)}"
        return Answer(200, body, {"Cache-Control": "no-store"})

    def register(self, index: int, server: AuthServer, body: bytes) -> Answer:
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            return Answer(400, {"error": "invalid_client_metadata"})
        method = server.auth_methods[0]
        client_id = f"client-{index}-{next(self.numbers)}"
        self.clients[client_id] = index
        answer = {**document, "client_id": client_id, "token_endpoint_auth_method": method}
        if method != "none":
            answer["client_secret"] = f"secret-{client_id}"
        return Answer(201, answer)
