"""The harness's test authorization server: a signing key, RFC 8414 metadata, a JWKS, and tokens minted
on demand, good and bad.

Why it exists: the authorization suite judges an MCP server as an OAuth 2.1 resource server, and the
costly mistakes (a token for another audience accepted, an expired one accepted, a token from an issuer
the server does not trust accepted) can only be shown with tokens a real issuer signed. A deployment
under test trusts this issuer (its metadata and JWKS are served on 127.0.0.1 only), and the suite mints
each kind of token with the same key.

The key is an EC P-256 key kept as a private JWK in a file (mode 0600) so that a server that caches the
JWKS keeps trusting the issuer from one run to the next. Crypto is joserfc's; nothing here signs by hand.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, urlsplit

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
    """RFC 8414 authorization server metadata, with what MCP clients look for (PKCE with S256)."""
    issuer = issuer.rstrip("/")
    document: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "jwks_uri": issuer + JWKS_PATH,
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
    if scopes:
        document["scopes_supported"] = list(scopes)
    return document


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
    """Metadata, JWKS and a client-credentials token endpoint; nothing else (no interactive login)."""

    server: AuthorityServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the harness's output is its report."""

    def _send(self, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in (METADATA_PATH, "/.well-known/openid-configuration"):
            self._send(200, metadata(self.server.issuer, scopes=self.server.scopes))
        elif path == JWKS_PATH:
            self._send(200, self.server.key.public_jwks())
        elif path == "/authorize":
            self._send(
                400, {"error": "unsupported_response_type", "error_description": "no interactive login"}
            )
        else:
            self._send(404, {"error": "not_found"})

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/token":
            self._send(404, {"error": "not_found"})
            return
        length = min(int(self.headers.get("Content-Length") or 0), 64 * 1024)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            self._send(400, {"error": "unsupported_grant_type"})
            return
        resource = form.get("resource")
        if not resource:
            self._send(400, {"error": "invalid_target", "error_description": "RFC 8707 resource is required"})
            return
        scope = form.get("scope", " ".join(self.server.scopes))
        token = mint(self.server.key, issuer=self.server.issuer, audience=resource, scope=scope)
        self._send(
            200,
            {"access_token": token, "token_type": "Bearer", "expires_in": LIFETIME_SECONDS, "scope": scope},
        )


class AuthorityServer(ThreadingHTTPServer):
    """The test authorization server, bound to a loopback address only."""

    daemon_threads = True

    def __init__(
        self, key: SigningKey, *, host: str = "127.0.0.1", port: int = 0, scopes: tuple[str, ...] = ()
    ):
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise AuthorityError(f"the test authorization server binds loopback only, not {host!r}")
        super().__init__(("127.0.0.1" if host == "localhost" else host, port), _Handler)
        self.key = key
        self.scopes = scopes
        bound_host, bound_port = self.server_address[:2]
        host_text = bound_host.decode() if isinstance(bound_host, bytes) else str(bound_host)
        shown = f"[{host_text}]" if ":" in host_text else host_text
        #: The issuer identifier: the server's own URL, so that RFC 8414's issuer check holds.
        self.issuer = f"http://{shown}:{bound_port}"

    def start(self) -> threading.Thread:
        """Serve in a daemon thread (stopped by `shutdown()`)."""
        thread = threading.Thread(target=self.serve_forever, name="test-authority", daemon=True)
        thread.start()
        return thread
