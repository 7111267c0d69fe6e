"""The rows particular OAuth scenarios judge: how the client got its client ID (registration, client ID
metadata documents, pre-registration, the token endpoint's authentication), which scopes it asked for
(the challenge, scopes_supported, step-up and its limit, offline_access), and what it must refuse (a
resource metadata document for another server, a poisoned issuer, an authorization response whose
`iss` does not match, an authorization server's credentials at another)."""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.pack_api import ClientContext, missed
from conformance_packs.client.auth_checks import MARCH_FLOW, METADATA, judged_in
from conformance_packs.client.auth_scenarios import PRE_REGISTERED
from conformance_packs.client.auth_server import WELL_KNOWN_AS
from conformance_packs.client.auth_wire import AuthWire, Sent, path_of

STATELESS = ("2026-07-28",)


@judged_in(
    "registration",
    "CLIENT-AUTH-005",
    "the client ID comes from the priority order (CIMD when offered, else registration)",
    (*METADATA, "auth/basic-cimd"),
)
async def registration(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    client_id = wire.first_authorization().client_id or ""
    offered = bool(wire.servers and wire.servers[0]["metadata"].get("client_id_metadata_document_supported"))
    parts = urlsplit(client_id)
    is_url = parts.scheme == "https" and parts.path not in ("", "/")
    if offered and not is_url:
        ctx.miss_should(
            f"the server offers client ID metadata documents; the client used client_id {client_id!r}"
        )
    elif not offered and client_id not in wire.facts.get("clients", {}):
        ctx.miss_should(
            f"client_id {client_id!r} was neither registered with the server nor a document it supports"
        )


@judged_in(
    "pre-registered", "CLIENT-AUTH-006", "pre-registered credentials are used", ("auth/pre-registration",)
)
async def pre_registered(ctx: ClientContext) -> None:
    sent = AuthWire(ctx).first_exchange()
    used = sent.basic or (sent.params.get("client_id"), sent.params.get("client_secret"))
    expected = (PRE_REGISTERED["client_id"], PRE_REGISTERED["client_secret"])
    if tuple(used) != expected:
        ctx.miss_should(f"the token request authenticated as {used[0]!r}, not the pre-registered client")


def _method(sent: Sent) -> str:
    if sent.arrival.headers.get("authorization", "").startswith("Basic "):
        return "client_secret_basic" if sent.basic else "malformed Basic"
    return "client_secret_post" if sent.params.get("client_secret") else "none"


@judged_in(
    "token-auth",
    "CLIENT-AUTH-007",
    "the token endpoint is authenticated by the method the server supports",
    (
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
    ),
)
async def token_auth(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    sent = wire.first_exchange()
    expected = wire.servers[0]["metadata"]["token_endpoint_auth_methods_supported"][0]
    used = _method(sent)
    if used == expected:
        return
    if expected != "none" and used in ("none", "malformed Basic"):
        missed(
            f"the client was issued a secret and authenticated with {used} at the token endpoint",
            form=sent.params,
        )
    ctx.miss_should(f"the server supports {expected} only; the client used {used}")


def _scopes(sent: Sent) -> list[str]:
    return sent.params.get("scope", "").split()


@judged_in(
    "scope-selection",
    "CLIENT-AUTH-012",
    "the scope asked for is the challenge's, else scopes_supported, else none",
    (
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
    ),
)
async def scope_selection(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    asked = _scopes(wire.first_authorization())
    challenge, supported = wire.facts.get("challenge_scope"), wire.facts.get("prm_scopes")
    if challenge:
        wanted, source = str(challenge).split(), "the WWW-Authenticate challenge's scope"
    elif supported is not None:
        wanted, source = list(supported), "the PRM's scopes_supported"
    else:
        if asked:
            ctx.miss_should(f"no scope was challenged or listed; the client asked for {asked}")
        return
    missing = [s for s in wanted if s not in asked]
    if missing:
        ctx.miss_should(f"the client asked for {asked}, without {missing} of {source}")


def _second_authorization(ctx: ClientContext, wire: AuthWire) -> Sent:
    if "step-up-challenged" not in ctx.recording.marks:
        ctx.absent("the client never called the tool that needs more scope (no 403 was given)")
    found = wire.authorizations()
    if len(found) < 2:
        ctx.unless_failed("the client made no second authorization request")
        missed("the client got 403 insufficient_scope and did not re-authorize (step-up)")
    return found[1]


@judged_in("step-up", "CLIENT-AUTH-013", "a 403 insufficient_scope leads to step-up", ("auth/scope-step-up",))
async def step_up(ctx: ClientContext) -> None:
    sent = _second_authorization(ctx, AuthWire(ctx))
    if "mcp:write" not in _scopes(sent):
        missed(f"the step-up authorization asked for {_scopes(sent)}, not the challenged mcp:write")


@judged_in(
    "scope-union",
    "CLIENT-AUTH-014",
    "re-authorization keeps the scopes asked for before",
    ("auth/scope-step-up",),
    revisions=STATELESS,
)
async def scope_union(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    if len(wire.authorizations()) < 2:
        ctx.absent("no second authorization request (CLIENT-AUTH-013 judges the step-up)")
    if "mcp:basic" not in _scopes(wire.authorizations()[1]):
        missed(f"the step-up authorization asked for {_scopes(wire.authorizations()[1])}, dropping mcp:basic")


@judged_in(
    "retry-limit", "CLIENT-AUTH-015", "scope upgrades that never succeed stop", ("auth/scope-retry-limit",)
)
async def retry_limit(ctx: ClientContext) -> None:
    count = len(AuthWire(ctx).authorizations())
    if not count:
        ctx.absent("the client made no authorization request")
    if count > 3:
        missed(f"the client started {count} authorizations for a scope that is never granted (three at most)")
    ctx.note(f"{count} authorization requests")


MARCH = ("2025-03-26",)
MARCH_METADATA, MARCH_FALLBACK = MARCH_FLOW


def _base_metadata_first(ctx: ClientContext) -> AuthWire:
    """The recording, once the client asked for the authorization base URL's metadata before it
    authorized (2025-03-26: discovery first); FAIL when it did not."""
    wire = AuthWire(ctx)
    sent = wire.first_authorization()
    before = [a for a in wire.arrivals if a.t <= sent.arrival.t and a.method == "GET"]
    if WELL_KNOWN_AS not in [path_of(a) for a in before]:
        missed(
            f"the client authorized without first asking for {WELL_KNOWN_AS} at the authorization base URL",
            fetched=wire.gets(),
        )
    return wire


@judged_in(
    "base-url-metadata",
    "CLIENT-AUTH-029",
    "the authorization base URL's metadata is used (2025-03-26)",
    (MARCH_METADATA,),
    MARCH,
)
async def base_url_metadata(ctx: ClientContext) -> None:
    wire = _base_metadata_first(ctx)
    if wire.first_authorization().server != 0:
        missed("the client did not use the metadata's authorization endpoint")


@judged_in(
    "default-endpoints",
    "CLIENT-AUTH-030",
    "without metadata, the default endpoints of the authorization base URL (2025-03-26)",
    (MARCH_FALLBACK,),
    MARCH,
)
async def default_endpoints(ctx: ClientContext) -> None:
    _base_metadata_first(ctx)
