"""The OAuth flow as every authorization scenario judges it: discovery (protected resource metadata,
authorization server metadata), the flow done, the bearer token, PKCE, `state` and the resource
parameter. The scenario-specific rows (scopes, registration, RFC 9207, migration) are in
`auth_rules.py`. Each check reads the raw recording through `AuthWire`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from conformance.pack_api import ClientContext, client_check, era_of, missed
from conformance_packs.client import auth_scenarios  # noqa: F401  (registers the scenarios)
from conformance_packs.client.auth_server import WELL_KNOWN_AS, WELL_KNOWN_OIDC, WELL_KNOWN_PRM
from conformance_packs.client.auth_wire import AuthWire

Judge = Callable[[ClientContext], Awaitable[None]]
METADATA = ("auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3")
#: The scenarios whose client must go through the whole flow (the others end in a rejection).
FLOW = (
    *METADATA,
    "auth/basic-cimd",
    "auth/pre-registration",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
)
#: 2025-03-26's flows: no protected resource metadata, and no resource parameter yet.
MARCH_FLOW = ("auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback")


def judged_in(
    key: str, row: str, title: str, scenarios: tuple[str, ...], revisions: tuple[str, ...] | None = None
) -> Callable[[Judge], Judge]:
    """Register `func` as one check per scenario (`client.auth.KEY.SCENARIO`), all on row `row`. A row
    of the modern revisions only (`revisions` all of that era) judges a client that spoke them: one that
    opened with `initialize` and failed the run implements an earlier revision's authorization too, one
    cause the contract case's ERROR already says (its rows SKIP blocked by it)."""

    def register(func: Judge) -> Judge:
        judge = func
        if revisions and all(era_of(r) == "modern" for r in revisions):
            judge = _of_modern_clients(func)
        for name in scenarios:
            check_id = f"client.auth.{key}.{name.removeprefix('auth/')}"
            http = ("http",)
            client_check(check_id, row, title, scenario=name, revisions=revisions, transports=http)(judge)
        return func

    return register


def _of_modern_clients(func: Judge) -> Judge:
    async def judged(ctx: ClientContext) -> None:
        if ctx.requests("initialize"):
            ctx.unless_failed("the client opened with initialize, an earlier revision's handshake")
        await func(ctx)

    judged.__name__, judged.__doc__ = func.__name__, func.__doc__
    return judged


def _no_flow(wire: AuthWire, what: str) -> None:
    """SKIP when the client never started authorizing at all (CLIENT-AUTH-003's miss, one verdict);
    else return, for the check to judge the discovery it skipped."""
    wire.ctx.unless_failed(what)
    if not wire.authorizations():
        wire.ctx.absent(f"{what}, nor authorized at all (CLIENT-AUTH-003 judges the flow)")


def _expected_prm(wire: AuthWire) -> list[str]:
    """The PRM URLs the spec's order allows first: the challenge's, else path-inserted then root."""
    facts = wire.facts
    prm_url = str(facts.get("prm_url") or "")
    if facts.get("prm_in_header"):
        return [urlsplit(prm_url).path]
    return [WELL_KNOWN_PRM + "/mcp", WELL_KNOWN_PRM]


@judged_in("prm-discovery", "CLIENT-AUTH-001", "protected resource metadata found in MCP's order", METADATA)
async def prm_discovery(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    served = urlsplit(str(wire.facts.get("prm_url") or "")).path
    asked = [p for p in wire.gets() if p.startswith(WELL_KNOWN_PRM) or p == served]
    if served not in asked:
        _no_flow(wire, "the client never fetched the protected resource metadata")
        missed(f"the client never fetched the protected resource metadata at {served}", fetched=wire.gets())
    allowed = _expected_prm(wire)
    before = asked[: asked.index(served) + 1]
    stray = [p for p in before if p not in allowed]
    if stray or (len(before) > 1 and before != allowed[: len(before)]):
        missed(
            f"the client asked for the protected resource metadata at {before}; MCP's order allows {allowed}",
            fetched=asked,
        )


def _metadata_order(issuer: str) -> list[str]:
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return [WELL_KNOWN_AS, WELL_KNOWN_OIDC]
    return [WELL_KNOWN_AS + path, WELL_KNOWN_OIDC + path, path + WELL_KNOWN_OIDC]


@judged_in("as-discovery", "CLIENT-AUTH-002", "authorization server metadata found in MCP's order", METADATA)
async def as_discovery(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    server = wire.servers[0] if wire.servers else {}
    order = _metadata_order(str(server.get("issuer", "")))
    served = str(server.get("metadata_path", ""))
    asked = [
        p for p in wire.gets() if ".well-known/oauth-authorization-server" in p or "openid-configuration" in p
    ]
    if served not in asked:
        _no_flow(wire, "the client never fetched the authorization server metadata")
        missed(f"the client never fetched the authorization server metadata at {served}", fetched=asked)
    before = asked[: asked.index(served) + 1]
    if before != order[: len(before)]:
        missed(f"the client asked for {before}; for this issuer MCP's order is {order}", fetched=asked)


@judged_in("flow", "CLIENT-AUTH-003", "a 401 is answered with the authorization code flow", FLOW + MARCH_FLOW)
async def flow(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    if not wire.mcp_posts():
        ctx.absent("the client sent no MCP request")
    if not wire.authorizations():
        ctx.unless_failed("the client made no authorization request")
        if all(ctx.recording.delivered(a) for a in wire.mcp_posts()):
            ctx.absent("the MCP server never challenged the client: no request of it was answered 401")
        missed(
            "the MCP server answered 401 and the client made no authorization request", fetched=wire.gets()
        )
    if not wire.code_exchanges():
        ctx.unless_failed("the client made no token request")
        missed("the client was given an authorization code and never exchanged it at the token endpoint")


@judged_in(
    "bearer",
    "CLIENT-AUTH-004",
    "the access token is sent as a bearer token on every request",
    FLOW + MARCH_FLOW,
)
async def bearer(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    wire.first_exchange()
    posts = wire.mcp_posts()
    first = next((i for i, a in enumerate(posts) if "authorization" in a.headers), None)
    if first is None:
        ctx.unless_failed("the client sent no MCP request with a token")
        missed("the client obtained a token and sent no MCP request with an Authorization header")
    for arrival in posts[first:]:
        header = arrival.headers.get("authorization", "")
        if header[:7].lower() != "bearer " or "access_token=" in arrival.path:
            missed(f"an MCP request after the grant carried Authorization {header!r}", path=arrival.path)


@judged_in(
    "pkce-challenge",
    "CLIENT-AUTH-008",
    "the authorization request carries an S256 code challenge",
    FLOW + MARCH_FLOW,
)
async def pkce_challenge(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    wire.first_authorization()
    for sent in wire.authorizations():
        if not sent.params.get("code_challenge"):
            missed("an authorization request carried no code_challenge", query=sent.params)
        if sent.params.get("code_challenge_method") != "S256":
            missed(
                f"code_challenge_method was {sent.params.get('code_challenge_method')!r}, not S256",
                query=sent.params,
            )


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@judged_in(
    "pkce-verifier",
    "CLIENT-AUTH-009",
    "the token request's code verifier matches the challenge",
    FLOW + MARCH_FLOW,
)
async def pkce_verifier(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    wire.first_exchange()
    challenges = {s.params.get("code_challenge") for s in wire.authorizations()}
    for sent in wire.code_exchanges():
        verifier = sent.params.get("code_verifier")
        if not verifier:
            missed("a token request carried no code_verifier", form=sent.params)
        if s256(verifier) not in challenges:
            missed(
                "the code_verifier does not hash (S256) to any code_challenge the client sent",
                form=sent.params,
            )


@judged_in("state", "CLIENT-AUTH-025", "the authorization request carries a state", FLOW + MARCH_FLOW)
async def state(ctx: ClientContext) -> None:
    sent = AuthWire(ctx).first_authorization()
    if len(sent.params.get("state", "")) < 8:
        missed(f"the authorization request's state is {sent.params.get('state')!r}", query=sent.params)


@judged_in("resource", "CLIENT-AUTH-010", "the resource parameter in authorization and token requests", FLOW)
async def resource(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    sent, exchange = wire.first_authorization(), wire.first_exchange()
    asked, given = sent.params.get("resource"), exchange.params.get("resource")
    if not asked or not given:
        where = "authorization" if not asked else "token"
        missed(f"the {where} request carried no resource parameter", query=sent.params, form=exchange.params)
    for value in (asked, given):
        parts = urlsplit(value)
        if not parts.scheme or not parts.netloc or "#" in value:
            missed(f"the resource parameter {value!r} is no absolute URI without a fragment")
    if asked != given:
        missed(
            f"the resource parameter differs: {asked!r} in the authorization request, "
            f"{given!r} at the token endpoint"
        )


@judged_in("resource-prm", "CLIENT-AUTH-011", "the resource parameter is the PRM's resource, exactly", FLOW)
async def resource_matches_prm(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    published = str(wire.facts.get("prm_resource"))
    sent = [("authorization", s.params.get("resource")) for s in [wire.first_authorization()]]
    sent += [("token", t.params.get("resource")) for t in wire.code_exchanges()[:1]]
    for where, value in sent:
        if value is None or value == published:
            continue
        if value.rstrip("/") == published.rstrip("/"):
            ctx.miss_should(
                f"the {where} request's resource {value!r} differs from {published!r} by a trailing slash"
            )
            continue
        missed(f"the {where} request's resource {value!r} is not the published {published!r}")
