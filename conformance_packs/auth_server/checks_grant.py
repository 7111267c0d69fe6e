"""ASRV-DCR-001, -CIMD-001, -CODE-001 to -003, -ERR-001, -PKCE-001, -RES-001 and -REFRESH-001: the
client registrations the server advertises, then the authorization code grant with PKCE and what
follows from its token: the error answers, a wrong verifier, the audience, refresh rotation.

The order matters: the grant's client comes from the registration rows, and the grant's facts are
judged by the first row reading them (`remember_once`); a later row is blocked by that one's case.
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

from conformance.pack_api import (
    IssuerContext,
    IssuerExchange,
    blocked,
    issuer_check,
    missed,
    since,
    skip,
    unjudgeable,
    weak,
)

from .clients import CIMD_CHECK, DCR_CHECK, Client, document_server, of_grant, registered
from .discovery import metadata
from .grant import CODE_CHECK, TOKEN_CHECK, Pkce, authorize, code_grant, token, token_request, unanswered

ERROR_CHECK = "authorization-server.errors.shape"


@issuer_check(DCR_CHECK, "ASRV-DCR-001", "Dynamic client registration answers 201 with a client_id")
async def dynamic_registration(ctx: IssuerContext) -> None:
    client = await registered(ctx, await metadata(ctx))
    ctx.note(f"registered {client.client_id} ({client.auth})")
    if ctx.shared.get("registration-said"):
        said, excerpt = ctx.shared["registration-said"]
        weak(f"the registration answered {said}, not 201 application/json", **excerpt)


@issuer_check(
    CIMD_CHECK,
    "ASRV-CIMD-001",
    "A client ID metadata document identifies a client",
    revisions=since("2025-11-25"),
)
async def metadata_document(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    if first.document.get("client_id_metadata_document_supported") is not True:
        skip("the metadata does not say client_id_metadata_document_supported", kind="not-applicable")
    server = document_server(ctx)
    before = len(server.fetched)
    client = Client(server.url("client"), server.redirect_uri, origin="metadata-document")
    done = await authorize(ctx, first, client)
    fetched = server.fetched[before:]
    if done.code is None:
        if not fetched:
            skip(
                f"the server never fetched {client.client_id} ({unanswered(done)}): a metadata document is "
                "normally served over https, which the harness's loopback document is not"
            )
        missed(
            f"the server fetched the metadata document but gave no code: {unanswered(done)}",
            **done.evidence(),
        )
    ctx.shared["metadata-document-client"] = client
    impostor = Client(server.url("impostor"), server.redirect_uri, origin="metadata-document")
    refused = await authorize(ctx, first, impostor)
    if refused.code is not None:
        missed(
            f"a code was issued for {impostor.client_id}, whose document says client_id {client.client_id}",
            **refused.evidence(),
        )


@issuer_check(CODE_CHECK, "ASRV-CODE-001", "The authorization response carries the code and the state")
async def code_response(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    client = await of_grant(ctx, first)
    done = await code_grant(ctx, first, client)
    iss = (done.params or {}).get("iss")
    if iss is not None and iss != [ctx.issuer]:
        ctx.soft_warn(f"iss is {iss}, not the issuer {ctx.issuer} (RFC 9207)")
    ctx.note(f"client: {client.origin} ({client.auth})")


@issuer_check(TOKEN_CHECK, "ASRV-CODE-002", "The code is exchanged for an access token")
async def code_token(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    await token(ctx, first, await of_grant(ctx, first))


@issuer_check("authorization-server.code.no-store", "ASRV-CODE-003", "A token response is never cached")
async def no_store(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    _, exchange = await token(ctx, first, await of_grant(ctx, first))
    directives = [d.strip().lower() for d in exchange.headers.get("cache-control", "").split(",")]
    if "no-store" not in directives:
        said = exchange.headers.get("cache-control")
        missed(f"Cache-Control is {said!r}, without no-store", **exchange.excerpt())


def _error_of(exchange: IssuerExchange) -> str | None:
    body = exchange.json()
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, str) else None


@issuer_check(ERROR_CHECK, "ASRV-ERR-001", "A token error is RFC 6749's JSON error answer")
async def error_shape(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    client = await of_grant(ctx, first)
    form = {
        "grant_type": "authorization_code",
        "code": "never-issued-" + secrets.token_urlsafe(12),
        "redirect_uri": client.redirect_uri,
        "code_verifier": Pkce.new().verifier,
    }
    exchange = await token_request(ctx, first, client, form)
    error = _error_of(exchange)
    if error is None:  # "error REQUIRED"
        ctx.shared["error-shape-broken"] = True
        said = f"HTTP {exchange.status}, {exchange.content_type or 'no content type'}"
        missed(f"a code never issued was answered {said}, with no JSON error member", **exchange.excerpt())
    if error != "invalid_grant":
        ctx.note(f"error {error!r} (RFC 6749 section 5.2 names invalid_grant for an invalid code)")
    # The status and the media type are stated without a keyword: WARN when they differ.
    odd = []
    if exchange.status not in (400, 401) or (exchange.status == 401 and error != "invalid_client"):
        odd.append(f"HTTP {exchange.status}, not 400")
    if "application/json" not in exchange.content_type.lower():
        odd.append(f"{exchange.content_type or 'no content type'}, not application/json")
    if odd:
        weak(f"the error {error!r} came with " + " and ".join(odd), **exchange.excerpt())


@issuer_check(
    "authorization-server.pkce.wrong-verifier", "ASRV-PKCE-001", "A wrong code_verifier is invalid_grant"
)
async def wrong_verifier(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    client = await of_grant(ctx, first)
    await code_grant(ctx, first, client)  # the grant works: blocked by its case when it does not
    fresh = await authorize(ctx, first, client)
    if fresh.code is None:
        unjudgeable(f"a second authorization request gave no code: {unanswered(fresh)}", **fresh.evidence())
    form = {
        "grant_type": "authorization_code",
        "code": fresh.code,
        "redirect_uri": client.redirect_uri,
        "code_verifier": Pkce.new().verifier,
        "resource": fresh.resource,
    }
    exchange = await token_request(ctx, first, client, form)
    body, error = exchange.json(), _error_of(exchange)
    if exchange.status == 200 and isinstance(body, dict) and "access_token" in body:
        missed(
            "a token was issued for a code_verifier that does not match the code_challenge",
            **exchange.excerpt(),
        )
    if error is None and ctx.shared.get("error-shape-broken"):
        blocked(ERROR_CHECK, "the server's token errors are not RFC 6749's JSON error answers")
    if error != "invalid_grant":
        missed(
            f"the wrong code_verifier was answered HTTP {exchange.status}, error {error!r}",
            **exchange.excerpt(),
        )


def _claims(token_value: str) -> dict[str, Any] | None:
    """A JWT's claims, read without verifying it (the audience is what is judged), or None."""
    parts = token_value.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


@issuer_check(
    "authorization-server.resource.audience", "ASRV-RES-001", "The access token's audience is the resource"
)
async def audience(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    done, exchange = await token(ctx, first, await of_grant(ctx, first))
    claims = _claims(exchange.json()["access_token"])
    if claims is None:
        skip("the access token is opaque (no JWT): its audience cannot be read")
    aud = claims.get("aud")
    auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if done.resource not in auds:
        missed(f"the token's aud is {aud!r}, not the resource asked for ({done.resource})", aud=aud)


@issuer_check(
    "authorization-server.refresh.rotation", "ASRV-REFRESH-001", "A public client's refresh token is rotated"
)
async def refresh_rotation(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    client = await of_grant(ctx, first)
    done, exchange = await token(ctx, first, client)
    old = exchange.json().get("refresh_token")
    if not isinstance(old, str):
        skip("the token response carried no refresh_token")
    if not client.public:
        skip("the client is confidential: the rotation MUST is for public clients")
    form = {"grant_type": "refresh_token", "refresh_token": old, "resource": done.resource}
    renewed = await token_request(ctx, first, client, form)
    body = renewed.json()
    if renewed.status != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        missed(f"the refresh token was not redeemed (HTTP {renewed.status})", **renewed.excerpt())
    new = body.get("refresh_token")
    if not isinstance(new, str) or new == old:
        missed("the refresh gave no new refresh token: the old one was not rotated", **renewed.excerpt())
    replay = await token_request(ctx, first, client, form)
    if replay.status == 200 and isinstance(replay.json(), dict) and "access_token" in replay.json():
        missed("the old refresh token was redeemed again after its rotation", **replay.excerpt())
