"""The harness's test authorization server: a signing key, RFC 8414 metadata, a JWKS, and tokens minted
on demand, good and bad.

Why it exists: the authorization suite judges an MCP server as an OAuth 2.1 resource server, and the
costly mistakes (a token for another audience accepted, an expired one accepted, a token from an issuer
the server does not trust accepted) can only be shown with tokens a real issuer signed. A deployment
under test trusts this issuer (its metadata and JWKS are served on 127.0.0.1 only), and the suite mints
each kind of token with the same key. It is also the reference of `mcp-conformance authorization`,
which judges an authorization server: the authorization code grant with PKCE (approved at once, no
login page), refresh rotation, RFC 8707 resources, registration and client ID metadata documents are
`oauth_grants.OAuthGrants`', served here under the issuer's path.

The key is an EC P-256 key kept as a private JWK in a file (mode 0600) so that a server that caches the
JWKS keeps trusting the issuer from one run to the next. Crypto is joserfc's; nothing here signs by hand.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, unquote_plus, urlsplit

from conformance.infra.oauth_grants import Answer, OAuthError, OAuthGrants

if TYPE_CHECKING:  # joserfc (and cryptography under it) load on first use: `--help` and `list` stay light
    from joserfc.jwk import ECKey

#: The kinds of token `mint` makes; each but `valid` must be refused by a resource server.
TOKEN_KINDS: Final = (
    "valid",
    "expired",
    "wrong-audience",
    "wrong-issuer",
    "unknown-key",
    "small-scope",
    "malformed",
)
ALGORITHM: Final = "ES256"
#: Lifetime of a minted token: long enough for any run, short enough to be worth little if it leaked.
LIFETIME_SECONDS: Final = 3600
#: Where a valid token's time went: expired tokens expired this long ago (beyond any clock leeway).
EXPIRED_AGO_SECONDS: Final = 3600
#: The audience of a `wrong-audience` token and the issuer of a `wrong-issuer` one: never a real server.
OTHER_AUDIENCE: Final = "https://other-resource.invalid/mcp"
OTHER_ISSUER: Final = "https://untrusted-issuer.invalid"
METADATA_PATH: Final = "/.well-known/oauth-authorization-server"
OPENID_PATH: Final = "/.well-known/openid-configuration"
JWKS_PATH: Final = "/jwks.json"


class AuthorityError(Exception):
    """A key file or request the test authority cannot use: the message is one line."""


@dataclass(frozen=True)
class SigningKey:
    """The authority's key pair and its key ID (the JWKS `kid`)."""

    key: ECKey

    @property
    def kid(self) -> str:
        return str(self.key.kid)

    def public_jwks(self) -> dict[str, Any]:
        return {"keys": [self.key.as_dict(private=False)]}


def new_key(kid: str | None = None) -> SigningKey:
    from joserfc.jwk import ECKey

    kid = kid or "conformance-" + secrets.token_hex(4)
    return SigningKey(ECKey.generate_key("P-256", {"kid": kid, "use": "sig", "alg": ALGORITHM}, private=True))


def load_key(path: str | Path, *, create: bool = True) -> SigningKey:
    """The key in `path` (a private JWK); a new one is written there first when the file is missing."""
    from joserfc.jwk import ECKey

    path = Path(path)
    if not path.exists():
        if not create:
            raise AuthorityError(f"{path}: no such key file")
        key = new_key()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(key.key.as_dict(private=True), handle)
        return key
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        loaded = ECKey.import_key(data)
    except (OSError, ValueError, TypeError) as exc:
        raise AuthorityError(f"{path}: not a private EC JWK ({exc})") from None
    if not loaded.is_private or not loaded.kid:
        raise AuthorityError(f"{path}: the JWK must be private and have a kid")
    return SigningKey(loaded)


def metadata(issuer: str, *, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
    """RFC 8414 authorization server metadata, with what MCP clients look for: PKCE with S256, client
    ID metadata documents, dynamic client registration, RFC 9207's `iss` in authorization responses."""
    issuer = issuer.rstrip("/")
    document: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "registration_endpoint": issuer + "/register",
        "jwks_uri": issuer + JWKS_PATH,
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
    }
    if scopes:
        document["scopes_supported"] = list(scopes)
    return document


def metadata_paths(issuer_path: str) -> tuple[str, ...]:
    """Where the metadata of an issuer with this path is served: RFC 8414's and OpenID's well-known
    URIs inserted before the path (the root ones when there is none), and OpenID's appended to it."""
    path = issuer_path.rstrip("/")
    found = (METADATA_PATH + path, OPENID_PATH + path)
    return (*found, path + OPENID_PATH) if path else found


def mint(
    key: SigningKey,
    *,
    issuer: str,
    audience: str,
    scope: str = "",
    kind: str = "valid",
    now: float | None = None,
) -> str:
    """A token of `kind` (see TOKEN_KINDS) for `audience`, as `issuer` would sign a valid one.

    Each bad kind differs from a valid token in one way only, so a server that accepts it has skipped
    exactly one validation step: the audience, the expiry, the issuer or the signature. A `small-scope`
    token is valid but carries no scope at all.
    """
    if kind not in TOKEN_KINDS:
        raise AuthorityError(f"unknown token kind {kind!r}; one of {', '.join(TOKEN_KINDS)}")
    if kind == "malformed":
        return "not-a-jwt." + secrets.token_urlsafe(24)
    issued = int(now if now is not None else time.time())
    claims: dict[str, Any] = {
        "iss": issuer.rstrip("/"),
        "sub": "mcp-conformance",
        "aud": audience,
        "client_id": "mcp-conformance",
        "iat": issued,
        "nbf": issued - 60,
        "exp": issued + LIFETIME_SECONDS,
        "jti": secrets.token_hex(8),
    }
    if scope and kind != "small-scope":
        claims["scope"] = scope
    signer = key
    if kind == "expired":
        claims.update(iat=issued - 2 * EXPIRED_AGO_SECONDS, nbf=issued - 2 * EXPIRED_AGO_SECONDS)
        claims["exp"] = issued - EXPIRED_AGO_SECONDS
    elif kind == "wrong-audience":
        claims["aud"] = OTHER_AUDIENCE
    elif kind == "wrong-issuer":
        claims["iss"] = OTHER_ISSUER
    elif kind == "unknown-key":
        signer = new_key(kid=key.kid)  # same kid, another key: only a checked signature tells them apart
    from joserfc import jwt

    header = {"alg": ALGORITHM, "kid": signer.kid, "typ": "at+jwt"}
    return jwt.encode(header, claims, signer.key)


def token_set(
    key: SigningKey, *, issuer: str, audience: str, scope: str = "", now: float | None = None
) -> dict[str, str]:
    """One token of every kind, minted at once (so a run can mask them all before any is sent)."""
    return {
        kind: mint(key, issuer=issuer, audience=audience, scope=scope, kind=kind, now=now)
        for kind in TOKEN_KINDS
    }


class _Handler(BaseHTTPRequestHandler):
    """Metadata, JWKS, the authorization endpoint (approved at once), the token endpoint and client
    registration, under the issuer's path; the OAuth rules themselves are `OAuthGrants`'."""

    server: AuthorityServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the harness's output is its report."""

    def _send(self, answer: Answer) -> None:
        data = json.dumps(answer.body).encode("utf-8") if answer.body is not None else b""
        self.send_response(answer.status)
        headers = {"Content-Type": "application/json"} if answer.body is not None else {}
        if answer.location:
            headers["Location"] = answer.location
        for name, value in {**headers, "Cache-Control": "no-store", **answer.headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> str:
        """The request's path below the issuer's (well-known URIs are matched whole)."""
        path = urlsplit(self.path).path
        if path in self.server.metadata_paths():
            return "metadata"
        prefix = self.server.path
        return path[len(prefix) :] if prefix and path.startswith(prefix + "/") else path

    def _answer(self, work: Any) -> None:
        try:
            self._send(work())
        except OAuthError as exc:
            self._send(self.server.grants.error_answer(exc))

    def do_GET(self) -> None:
        route, grants = self._route(), self.server.grants
        if route == "metadata":
            self._send(self.server.metadata_answer())
        elif route == JWKS_PATH:
            self._send(Answer(200, self.server.key.public_jwks()))
        elif route == "/authorize":
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            self._answer(lambda: grants.authorize(query))
        else:
            self._send(Answer(404, {"error": "not_found"}))

    def do_POST(self) -> None:
        route, grants = self._route(), self.server.grants
        length = min(int(self.headers.get("Content-Length") or 0), 64 * 1024)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        if route == "/token":
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            self._answer(lambda: grants.token(form, _basic(self.headers.get("Authorization", ""))))
        elif route == "/register":
            self._answer(lambda: grants.register(_json_or_none(raw)))
        else:
            self._send(Answer(404, {"error": "not_found"}))


def _basic(header: str) -> tuple[str, str] | None:
    """RFC 6749 section 2.3.1 client credentials from `Authorization: Basic`, form-decoded."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(value.strip()).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return unquote_plus(user), unquote_plus(password)


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class AuthorityServer(ThreadingHTTPServer):
    """The test authorization server, bound to a loopback address only; `path` is its issuer's path
    (none by default), so the well-known URIs of an issuer with a path are served too."""

    daemon_threads = True
    #: What the grants are; a test's mutant names a subclass with one rule broken.
    grants_class: type[OAuthGrants] = OAuthGrants

    def __init__(
        self,
        key: SigningKey,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        scopes: tuple[str, ...] = (),
        path: str = "",
    ):
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise AuthorityError(f"the test authorization server binds loopback only, not {host!r}")
        if path and (not path.startswith("/") or path.endswith("/")):
            raise AuthorityError(f"the issuer path must start with / and not end with it, not {path!r}")
        super().__init__(("127.0.0.1" if host == "localhost" else host, port), _Handler)
        self.key = key
        self.scopes = scopes
        self.path = path
        bound_host, bound_port = self.server_address[:2]
        host_text = bound_host.decode() if isinstance(bound_host, bytes) else str(bound_host)
        shown = f"[{host_text}]" if ":" in host_text else host_text
        #: The issuer identifier: the server's own URL, so that RFC 8414's issuer check holds.
        self.issuer = f"http://{shown}:{bound_port}{path}"
        self.grants = self.grants_class(self.issuer, self._mint, scopes)

    def _mint(self, audience: str, scope: str) -> str:
        return mint(self.key, issuer=self.issuer, audience=audience, scope=scope)

    def metadata_paths(self) -> tuple[str, ...]:
        return metadata_paths(self.path)

    def metadata(self) -> dict[str, Any]:
        """The metadata document every well-known URI serves."""
        return metadata(self.issuer, scopes=self.scopes)

    def metadata_answer(self) -> Answer:
        return Answer(200, self.metadata())

    def start(self) -> threading.Thread:
        """Serve in a daemon thread (stopped by `shutdown()`)."""
        thread = threading.Thread(target=self.serve_forever, name="test-authority", daemon=True)
        thread.start()
        return thread
