"""The authorization code grant with PKCE, driven with no browser: the authorization request sent and
the server's redirects followed (cookies kept) until one points at the client's redirect URI, whose
query is the authorization response; then the token request.

Why its own module: four rows judge one grant (the response, the token, its caching, its audience) and
two more run grants of their own (a wrong verifier, a metadata document's client); the grant's facts are
computed once per revision by the case that judges them, the others are blocked by that case.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote_plus, urlencode, urljoin, urlsplit

from conformance.pack_api import IssuerContext, IssuerExchange, blocked, missed, skip

from .clients import Client
from .discovery import Found, endpoint

CODE_CHECK = "authorization-server.code.response"
TOKEN_CHECK = "authorization-server.code.token"
#: Redirects followed from the authorization endpoint to the client's redirect URI, at most.
MAX_HOPS = 10
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class Pkce:
    """An RFC 7636 verifier and its S256 challenge."""

    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii"))


@dataclass
class Authorization:
    """An authorization request, the hops it took and where they ended."""

    client: Client
    pkce: Pkce
    state: str
    resource: str
    hops: list[IssuerExchange] = field(default_factory=list)
    #: The authorization response's parameters (each with every value given), when a redirect
    #: reached the client's redirect URI.
    params: dict[str, list[str]] | None = None

    @property
    def code(self) -> str | None:
        codes = (self.params or {}).get("code") or []
        return codes[0] if len(codes) == 1 and codes[0] else None

    def evidence(self) -> dict[str, Any]:
        last = self.hops[-1] if self.hops else None
        return {
            "hops": [f"{h.method} {h.url} -> HTTP {h.status}" for h in self.hops],
            **(last.excerpt() if last is not None else {}),
        }


def resource(ctx: IssuerContext) -> str:
    """The RFC 8707 resource asked for: --resource, else the issuer's origin with /mcp."""
    given = ctx.settings.get("resource")
    if given:
        return str(given)
    parts = urlsplit(ctx.issuer)
    return f"{parts.scheme}://{parts.netloc}/mcp"


def _at_redirect(url: str, redirect_uri: str) -> bool:
    """Whether `url` is the client's redirect URI (scheme, host, port and path; any query)."""
    a, b = urlsplit(url), urlsplit(redirect_uri)
    same_port = a.port == b.port or (b.hostname in ("127.0.0.1", "::1") and b.port is None)
    return (a.scheme, a.hostname, a.path) == (b.scheme, b.hostname, b.path) and same_port


async def authorize(ctx: IssuerContext, found: Found, client: Client) -> Authorization:
    """Send an authorization request and follow the server's redirects to the client's redirect URI."""
    url = endpoint(found, "authorization_endpoint")
    if url is None:
        blocked("authorization-server.metadata.members", "the metadata names no authorization_endpoint")
    done = Authorization(client, Pkce.new(), secrets.token_urlsafe(16), resource(ctx))
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uri,
        "state": done.state,
        "code_challenge": done.pkce.challenge,
        "code_challenge_method": "S256",
        "resource": done.resource,
    }
    if ctx.settings.get("scope"):
        query["scope"] = ctx.settings["scope"]
    joiner = "&" if urlsplit(url).query else "?"
    url = url + joiner + urlencode(query)
    for _ in range(MAX_HOPS):
        exchange = await ctx.http("GET", url)
        done.hops.append(exchange)
        location = exchange.headers.get("location")
        if exchange.status not in REDIRECTS or not location:
            return done
        url = urljoin(url, location)
        if _at_redirect(url, client.redirect_uri):
            done.params = parse_qs(urlsplit(url).query, keep_blank_values=True)
            return done
    return done


def unanswered(done: Authorization) -> str:
    """Why an authorization request reached no redirect URI, in one line."""
    last = done.hops[-1] if done.hops else None
    if last is None:
        return "nothing was sent"
    if last.status in REDIRECTS:
        return f"it redirected {MAX_HOPS} times without reaching the redirect URI"
    if last.status == 200 and "html" in last.content_type.lower():
        return "the server answered a page (a login or consent form) a person must fill in"
    return f"the server answered HTTP {last.status} instead of redirecting to the client"


def interactive(done: Authorization) -> bool:
    last = done.hops[-1] if done.hops else None
    return last is not None and last.status == 200 and "html" in last.content_type.lower()


async def token_request(
    ctx: IssuerContext, found: Found, client: Client, form: dict[str, str]
) -> IssuerExchange:
    """POST the token endpoint with the client's authentication (RFC 6749 section 2.3.1)."""
    url = endpoint(found, "token_endpoint")
    if url is None:
        blocked("authorization-server.metadata.members", "the metadata names no token_endpoint")
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    form = dict(form)
    if client.auth == "client_secret_basic" and client.secret is not None:
        pair = f"{quote_plus(client.client_id)}:{quote_plus(client.secret)}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    else:
        form["client_id"] = client.client_id
        if client.secret is not None:
            form["client_secret"] = client.secret
    return await ctx.http("POST", url, content=urlencode(form), headers=headers)


def redeem_form(done: Authorization, code: str, verifier: str | None = None) -> dict[str, str]:
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": done.client.redirect_uri,
        "code_verifier": verifier if verifier is not None else done.pkce.verifier,
        "resource": done.resource,
    }


def judge_response(done: Authorization) -> list[str]:
    """What is wrong with an authorization response under RFC 6749 section 4.1.2 (empty: nothing)."""
    params = done.params or {}
    wrong = []
    if done.code is None:
        wrong.append(f"code is not given once with a value ({len(params.get('code', []))} given)")
    if params.get("state") != [done.state]:
        wrong.append(f"state is not the one sent ({params.get('state', 'absent')})")
    return wrong


async def code_grant(ctx: IssuerContext, found: Found, client: Client) -> Authorization:
    """The revision's authorization, judged once by ASRV-CODE-001's case."""

    async def run() -> Authorization:
        done = await authorize(ctx, found, client)
        if done.params is None:
            if interactive(done):
                skip(
                    f"{unanswered(done)}: configure the server to approve a test account's requests at "
                    "once (docs/authorization-server.md)",
                    kind="needs-option",
                )
            missed(f"the authorization request was not answered: {unanswered(done)}", **done.evidence())
        refused = (done.params or {}).get("error")
        if refused:
            # RFC 6749 section 4.1.2.1: refusing is the server's right, and no code is no defect of it.
            said = " ".join([*refused, *(done.params or {}).get("error_description", [])])
            skip(
                f"the server refused the authorization request ({said}): judge it with a client and scope "
                "(--client-id, --scope) its test account is granted at once",
                kind="needs-option",
                option="--scope",
            )
        wrong = judge_response(done)
        if wrong:
            missed("the authorization response is not RFC 6749's: " + "; ".join(wrong), **done.evidence())
        return done

    return await ctx.remember_once("code-grant", CODE_CHECK, run)


async def token(ctx: IssuerContext, found: Found, client: Client) -> tuple[Authorization, IssuerExchange]:
    """The revision's token response for the code of `code_grant`, judged once by ASRV-CODE-002."""

    async def run() -> tuple[Authorization, IssuerExchange]:
        done = await code_grant(ctx, found, client)
        assert done.code is not None
        exchange = await token_request(ctx, found, client, redeem_form(done, done.code))
        body = exchange.json()
        wrong = []
        if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            wrong.append("no access_token string")
        elif not isinstance(body.get("token_type"), str):
            wrong.append("no token_type string")
        if wrong:  # both REQUIRED
            said = f"HTTP {exchange.status}, {exchange.content_type or 'no content type'}"
            missed(
                f"the code was not exchanged for a token ({said}): " + "; ".join(wrong), **exchange.excerpt()
            )
        return done, exchange

    return await ctx.remember_once("token", TOKEN_CHECK, run)
