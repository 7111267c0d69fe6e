"""What the test authorization server does beyond metadata and keys: the authorization code grant with
PKCE (approved at once, no login page), the refresh token grant with rotation, RFC 8707 resource
indicators bound to the token's audience, RFC 7591 dynamic client registration and client ID metadata
documents, with RFC 6749 error answers.

Why it exists: `mcp-conformance authorization` judges an authorization server as MCP's authorization
pages require it, and needs a reference that passes every row with no browser in the loop. Each rule is
one small method, so a test's mutant (tests/servers/authority_mutants.py) breaks exactly one of them.
Stdlib only; tokens are minted by the callback the server hands in (joserfc's signing, never ours).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

#: Seconds an authorization code stays redeemable (RFC 6749 section 4.1.2 recommends ten minutes at most).
CODE_LIFETIME_SECONDS = 120
#: The most a client ID metadata document may weigh when fetched.
CIMD_MAX_BYTES = 64 * 1024
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")

#: `mint(audience, scope) -> token`: the signing the server owns.
Minter = Callable[[str, str], str]


class OAuthError(Exception):
    """An RFC 6749 error answer: `error`, its description, and the HTTP status (400 unless said)."""

    def __init__(self, error: str, description: str = "", status: int = 400) -> None:
        super().__init__(error)
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        return {"error": self.error, **({"error_description": self.description} if self.description else {})}


@dataclass(frozen=True)
class Client:
    """A client the server knows: registered (RFC 7591) or described by its metadata document."""

    client_id: str
    redirect_uris: tuple[str, ...]
    secret: str | None = None


@dataclass
class Grant:
    """What an authorization code or a refresh token stands for."""

    client_id: str
    resource: str
    scope: str
    redirect_uri: str = ""
    challenge: str = ""
    expires: float = 0.0


@dataclass
class Answer:
    """An HTTP answer: status, JSON body or a redirect `location`, extra headers."""

    status: int
    body: Mapping[str, Any] | None = None
    location: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def s256(verifier: str) -> str:
    """RFC 7636 section 4.2: BASE64URL(SHA256(ASCII(code_verifier))), unpadded."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class OAuthGrants:
    """The grants and registrations of one test authorization server (thread-safe: the HTTP server
    runs a thread per request)."""

    def __init__(self, issuer: str, minter: Minter, scopes: tuple[str, ...] = ()) -> None:
        self.issuer = issuer
        self.mint = minter
        self.scopes = scopes
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Grant] = {}
        self.refresh: dict[str, Grant] = {}
        self.lock = threading.Lock()

    def error_answer(self, error: OAuthError) -> Answer:
        """RFC 6749 section 5.2's error answer: JSON with `error`, 400 unless said otherwise."""
        return Answer(error.status, error.body())

    # ------------------------------------------------------------------ clients

    def register(self, document: Any) -> Answer:
        """RFC 7591 section 3: a client from its metadata; 201 with its client_id (and a secret unless
        it asks for no client authentication)."""
        uris = document.get("redirect_uris") if isinstance(document, dict) else None
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs")
        method = document.get("token_endpoint_auth_method", "client_secret_basic")
        secret = None if method == "none" else secrets.token_urlsafe(24)
        client = Client("dcr-" + secrets.token_hex(8), tuple(uris), secret)
        with self.lock:
            self.clients[client.client_id] = client
        body = {
            **{k: v for k, v in document.items() if isinstance(k, str)},
            "client_id": client.client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
        }
        if secret:
            body.update(client_secret=secret, client_secret_expires_at=0)
        return Answer(201, body)

    def client(self, client_id: str) -> Client:
        """A registered client, or one whose ID is the URL of its metadata document."""
        with self.lock:
            known = self.clients.get(client_id)
        if known is not None:
            return known
        if client_id.startswith(("http://", "https://")):
            return self.metadata_document_client(client_id)
        raise OAuthError("invalid_client", "unknown client", 401)

    def metadata_document_client(self, url: str) -> Client:
        """Fetch the client's metadata document (loopback or https only) and hold it to its own URL."""
        parts = urlsplit(url)
        if parts.scheme != "https" and parts.hostname not in LOOPBACK_HOSTS:
            raise OAuthError("invalid_client", "a client ID metadata document is fetched over https")
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                document = json.loads(answer.read(CIMD_MAX_BYTES + 1)[:CIMD_MAX_BYTES])
        except (OSError, ValueError) as exc:
            raise OAuthError("invalid_client", f"client metadata document not usable: {exc}") from None
        if not self.document_names_itself(document, url):
            raise OAuthError("invalid_client", "the metadata document's client_id is not its URL")
        uris = document.get("redirect_uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise OAuthError("invalid_client", "the metadata document has no redirect_uris")
        return Client(url, tuple(uris))

    def document_names_itself(self, document: Any, url: str) -> bool:
        return isinstance(document, dict) and document.get("client_id") == url

    # ------------------------------------------------------------------ the authorization endpoint

    def authorize(self, query: Mapping[str, str]) -> Answer:
        """Approve at once (the test user consents to everything): a redirect with a code, or an
        error. Errors before the redirect URI is trusted are answered here, never redirected."""
        client = self.client(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        if redirect not in client.redirect_uris:
            raise OAuthError("invalid_request", "redirect_uri is not registered for this client")
        state = {"state": query["state"]} if "state" in query else {}
        problem = self.authorization_problem(query)
        if problem:
            return self.redirect(redirect, {"error": problem[0], "error_description": problem[1], **state})
        code = secrets.token_urlsafe(24)
        grant = Grant(
            client.client_id,
            query.get("resource", ""),
            query.get("scope", " ".join(self.scopes)),
            redirect,
            query.get("code_challenge", ""),
            time.time() + CODE_LIFETIME_SECONDS,
        )
        with self.lock:
            self.codes[code] = grant
        return self.redirect(redirect, {"code": code, **self.echoed_state(state), "iss": self.issuer})

    def authorization_problem(self, query: Mapping[str, str]) -> tuple[str, str] | None:
        if query.get("response_type") != "code":
            return ("unsupported_response_type", "only the code response type is served")
        if not query.get("code_challenge") or query.get("code_challenge_method") != "S256":
            return ("invalid_request", "PKCE with S256 is required")
        return None

    def echoed_state(self, state: dict[str, str]) -> dict[str, str]:
        return state

    def redirect(self, uri: str, params: Mapping[str, str]) -> Answer:
        joiner = "&" if urlsplit(uri).query else "?"
        return Answer(302, location=uri + joiner + urlencode(params))

    # ------------------------------------------------------------------ the token endpoint

    def token(self, form: Mapping[str, str], basic: tuple[str, str] | None) -> Answer:
        grant_type = form.get("grant_type", "")
        if grant_type == "authorization_code":
            return self.issued(self.redeem_code(form, self.authenticated(form, basic)))
        if grant_type == "refresh_token":
            return self.issued(self.redeem_refresh(form, self.authenticated(form, basic)))
        if grant_type == "client_credentials":
            return self.client_credentials(form)
        raise OAuthError("unsupported_grant_type", f"grant_type {grant_type!r} is not served")

    def authenticated(self, form: Mapping[str, str], basic: tuple[str, str] | None) -> Client:
        """The client of a token request: its secret checked (basic or post), a public client by ID."""
        client_id, secret = basic if basic else (form.get("client_id", ""), form.get("client_secret"))
        try:
            client = self.client(client_id)
        except OAuthError as exc:
            raise OAuthError("invalid_client", exc.description, 401) from None
        if client.secret is not None and not secrets.compare_digest(client.secret, secret or ""):
            raise OAuthError("invalid_client", "client authentication failed", 401)
        return client

    def redeem_code(self, form: Mapping[str, str], client: Client) -> Grant:
        with self.lock:
            grant = self.codes.pop(form.get("code", ""), None)  # single use, whatever happens next
        if grant is None or grant.expires < time.time() or grant.client_id != client.client_id:
            raise OAuthError("invalid_grant", "the authorization code is invalid, expired or used")
        if form.get("redirect_uri", "") != grant.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
        if not self.verifier_matches(grant.challenge, form.get("code_verifier", "")):
            raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
        resource = form.get("resource", grant.resource)
        if grant.resource and resource != grant.resource:
            raise OAuthError("invalid_target", "resource differs from the authorization request's")
        return Grant(client.client_id, resource, grant.scope)

    def verifier_matches(self, challenge: str, verifier: str) -> bool:
        return bool(verifier) and secrets.compare_digest(s256(verifier), challenge)

    def redeem_refresh(self, form: Mapping[str, str], client: Client) -> Grant:
        token = form.get("refresh_token", "")
        with self.lock:
            grant = self.refresh.get(token)
            if grant is not None and self.rotates(client):
                del self.refresh[token]
        if grant is None or grant.client_id != client.client_id:
            raise OAuthError("invalid_grant", "the refresh token is invalid or was already used")
        return grant

    def rotates(self, client: Client) -> bool:
        """OAuth 2.1 section 4.3.1 as MCP requires it: a public client's refresh token is single use."""
        return True

    def issued(self, grant: Grant) -> Answer:
        """The token response (RFC 6749 section 5.1): an access token for the grant's resource and a
        new refresh token, never cached."""
        refresh = secrets.token_urlsafe(32)
        with self.lock:
            self.refresh[refresh] = grant
        body = {
            "access_token": self.mint(self.audience(grant), grant.scope),
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
            "scope": grant.scope,
        }
        return Answer(200, body, headers=self.token_headers())

    def client_credentials(self, form: Mapping[str, str]) -> Answer:
        """A token for any caller naming its resource (RFC 8707): how a resource server's own tests
        get a valid token over HTTP; no refresh token."""
        resource = form.get("resource")
        if not resource:
            raise OAuthError("invalid_target", "RFC 8707 resource is required")
        scope = form.get("scope", " ".join(self.scopes))
        body = {"access_token": self.mint(resource, scope), "token_type": "Bearer", "expires_in": 3600}
        return Answer(200, {**body, "scope": scope}, headers=self.token_headers())

    def audience(self, grant: Grant) -> str:
        return grant.resource or self.issuer

    def token_headers(self) -> dict[str, str]:
        return {"Cache-Control": "no-store", "Pragma": "no-cache"}
