"""The 2026-07-28 OAuth rows (the official suite's draft scenarios): what the client must refuse (a
protected resource metadata document for another server, authorization server metadata naming
another issuer, an authorization response whose `iss` does not match, another authorization server's
credentials), what it may ask for (offline_access), and its registration metadata (application_type,
the refresh_token grant type)."""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.pack_api import ClientContext, missed
from conformance_packs.client.auth_checks import METADATA, judged_in
from conformance_packs.client.auth_wire import AuthWire, path_of

STATELESS = ("2026-07-28",)


def _went_on(wire: AuthWire) -> bool:
    return bool(wire.code_exchanges())


@judged_in(
    "resource-mismatch",
    "CLIENT-AUTH-016",
    "metadata for another resource is not used",
    ("auth/resource-mismatch",),
    STATELESS,
)
async def resource_mismatch(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    prm = urlsplit(str(wire.facts.get("prm_url"))).path
    if prm not in wire.gets():
        ctx.absent("the client never fetched the protected resource metadata")
    if wire.authorizations() or wire.registrations():
        published, asked = wire.facts.get("prm_resource"), wire.facts.get("mcp_url")
        missed(
            f"the metadata's resource is {published!r}, not {asked!r}, and the client went on to authorize"
        )


@judged_in(
    "metadata-issuer",
    "CLIENT-AUTH-023",
    "authorization server metadata naming another issuer is not used",
    ("auth/metadata-issuer-mismatch",),
    STATELESS,
)
async def metadata_issuer(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    served = wire.servers[0]["metadata_path"] if wire.servers else ""
    if served not in wire.gets():
        ctx.absent("the client never fetched the authorization server metadata")
    used = wire.authorizations() + wire.registrations() + wire.token_requests()
    if used:
        missed(
            "the metadata names issuer https://attacker.example.com, not the one its URL was built from, "
            f"and the client used its endpoints ({path_of(used[0].arrival)})"
        )


ISS_PROCEED = ("auth/iss-supported",)
ISS_REJECT = ("auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized")


async def _iss(ctx: ClientContext, proceed: bool, what: str) -> None:
    wire = AuthWire(ctx)
    wire.first_authorization()
    if proceed and not _went_on(wire):
        ctx.unless_failed("the client did not exchange the code")
        missed(f"{what}: the client should have exchanged the code, and did not")
    if not proceed and _went_on(wire):
        missed(f"{what}: the client sent the code to the token endpoint anyway")


@judged_in(
    "iss-compare",
    "CLIENT-AUTH-021",
    "a present iss is compared by simple string comparison",
    ISS_PROCEED + ISS_REJECT,
    STATELESS,
)
async def iss_compare(ctx: ClientContext) -> None:
    name = ctx.scenario.name
    await _iss(ctx, name in ISS_PROCEED, f"{name}: the response's iss is {_iss_kind(name)}")


def _iss_kind(name: str) -> str:
    return {
        "auth/iss-supported": "the issuer",
        "auth/iss-wrong-issuer": "another issuer",
        "auth/iss-unexpected": "another issuer (iss not advertised)",
        "auth/iss-normalized": "the issuer with a trailing slash",
    }.get(name, "absent")


@judged_in(
    "iss-absent",
    "CLIENT-AUTH-022",
    "an absent iss is rejected when advertised, accepted when not",
    ("auth/iss-supported-missing", "auth/iss-not-advertised"),
    STATELESS,
)
async def iss_absent(ctx: ClientContext) -> None:
    advertised = ctx.scenario.name == "auth/iss-supported-missing"
    state = "advertised" if advertised else "not advertised"
    await _iss(ctx, not advertised, f"the response has no iss and the metadata has it {state}")


@judged_in(
    "offline-access",
    "CLIENT-AUTH-017",
    "offline_access is asked for only when the authorization server lists it",
    ("auth/offline-access-scope", "auth/offline-access-not-supported"),
    STATELESS,
)
async def offline_access(ctx: ClientContext) -> None:
    wire = AuthWire(ctx)
    asked = "offline_access" in wire.first_authorization().params.get("scope", "").split()
    listed = "offline_access" in (wire.servers[0]["metadata"].get("scopes_supported") or [])
    if asked and not listed:
        missed("the client asked for offline_access, which the authorization server does not list")
    ctx.note(f"offline_access {'asked for' if asked else 'not asked for'}; listed: {listed}")


@judged_in(
    "refresh-grant",
    "CLIENT-AUTH-018",
    "the client's registration metadata lists the refresh_token grant type",
    ("auth/offline-access-scope", "auth/offline-access-not-supported"),
    STATELESS,
)
async def refresh_grant(ctx: ClientContext) -> None:
    found = AuthWire(ctx).registrations()
    if not found:
        ctx.absent("the client did not register dynamically: its client metadata is not on the wire")
    grants: list[str] = found[0].params.get("grant_types") or []
    if "refresh_token" not in grants:
        missed(f"the registration's grant_types are {grants}, without refresh_token")


@judged_in(
    "application-type",
    "CLIENT-AUTH-024",
    "dynamic registration names an application_type",
    METADATA,
    STATELESS,
)
async def application_type(ctx: ClientContext) -> None:
    found = AuthWire(ctx).registrations()
    if not found:
        ctx.absent("the client did not register dynamically")
    value = found[0].params.get("application_type")
    if value not in ("native", "web"):
        missed(f"the registration's application_type is {value!r}, not native or web", body=found[0].params)


def _migration(ctx: ClientContext) -> AuthWire:
    wire = AuthWire(ctx)
    if "authorization-server-changed" not in ctx.recording.marks:
        ctx.absent("the client never used a token of the first authorization server")
    return wire


@judged_in(
    "reregister",
    "CLIENT-AUTH-019",
    "a new authorization server is registered with anew",
    ("auth/authorization-server-migration",),
    STATELESS,
)
async def reregister(ctx: ClientContext) -> None:
    wire = _migration(ctx)
    if not [r for r in wire.registrations() if r.server == 1]:
        ctx.unless_failed("the client did not register with the new authorization server")
        missed(
            "the protected resource moved to a new authorization server and the client did not register there"
        )


@judged_in(
    "no-reuse",
    "CLIENT-AUTH-020",
    "another authorization server's credentials are not reused",
    ("auth/authorization-server-migration",),
    STATELESS,
)
async def no_reuse(ctx: ClientContext) -> None:
    wire = _migration(ctx)
    first = {cid for cid, server in wire.facts.get("clients", {}).items() if server == 0}
    for sent in wire.authorizations() + wire.token_requests():
        if sent.server == 1 and sent.client_id in first:
            missed(f"the client presented {sent.client_id!r}, issued by the first server, to the new one")
