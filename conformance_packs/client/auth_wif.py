"""The workload identity federation extension (`io.modelcontextprotocol/auth/wif`, SEP-1933), as the
official scenario `auth/wif-jwt-bearer` plays it: the client, a workload, holds a JWT its platform
issued and presents it to the authorization server as a JWT bearer grant (RFC 7523 section 2.1), then
calls the MCP server with the access token. The context gives three JWTs, as the official one does: a
valid one (audience: the authorization server), one for another audience and an expired one; a client
presents the valid one.

The authorization server (at the origin, the JWT bearer grant only, no registration) answers as the
official one: a request for a refused scope (`wif.trigger-unauthorized`, `wif.rejected`) is refused,
and any token request after a refused one is refused again. `x-wif-jwt-bearer-refused` (the harness's
own) refuses the first JWT bearer request (`invalid_grant`): the one place a well-behaved client meets
a refusal, where CLIENT-WIF-005 judges that it gives up. Extension rows (CLIENT-WIF-001 to -006);
what a check compares with is in `recording.facts["wif"]` (the workload key, when the run began, and
each token request's answer).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from conformance.pack_api import Arrival, ClientContext, missed, scenario
from conformance_packs.client.auth_checks import judged_in
from conformance_packs.client.auth_grant import (
    JWT_BEARER_GRANT,
    audiences,
    bearer_after_grant,
    new_key,
    note_issued,
    public,
    sign,
    verified,
)
from conformance_packs.client.auth_scenarios import AuthScenario
from conformance_packs.client.auth_server import Answer, AuthServer, form
from conformance_packs.client.auth_wire import AuthWire, Sent

WIF, WIF_REFUSED = "auth/wif-jwt-bearer", "x-wif-jwt-bearer-refused"
#: The official scenario's workload: its JWTs' issuer and subject, and its client ID.
WIF_ISSUER, SUBJECT, CLIENT_ID = (
    "https://idp.conformance-test.local",
    "conformance-workload",
    "conformance-wif-workload",
)
#: Scopes the authorization server refuses (the official broken clients ask for them).
REFUSED_SCOPES = {"wif.trigger-unauthorized": "unauthorized_client", "wif.rejected": "invalid_scope"}


@scenario
class WifJwtBearer(AuthScenario):
    """The workload key is made per run; the JWTs once the listener's origin (the audience) is known."""

    name = WIF
    unscored_track = "extension"
    description = "workload identity federation: a workload JWT presented as a JWT bearer grant"
    servers = (AuthServer(grant_types=(JWT_BEARER_GRANT,), registration=False),)
    #: Whether the first JWT bearer request is refused whatever it carries.
    refuse_first: ClassVar[bool] = False

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.key = new_key()
        began = time.time() - self.recording.now()
        self.wif: dict[str, Any] = self.recording.facts.setdefault("wif", {"began": began, "answers": []})
        self.wif["key"] = public(self.key)

    @property
    def context(self) -> dict[str, Any]:  # type: ignore[override]
        if "jwts" not in self.wif:
            audience = self.recording.facts["origin"]
            made = {
                "valid_jwt": (audience, 300),
                "wrong_audience_jwt": ("https://wrong.example", 300),
                "expired_jwt": (audience, -60),
            }
            claims = {"iss": WIF_ISSUER, "sub": SUBJECT}
            self.wif["jwts"] = {
                name: sign(self.key, claims | {"aud": aud}, lifetime=life)
                for name, (aud, life) in made.items()
            }
        return {"client_id": CLIENT_ID, **self.wif["jwts"]}

    def serve_as(self, index: int, server: AuthServer, request: Arrival, path: str) -> Answer | None:
        if path != server.at + "/token" or request.method != "POST":
            return super().serve_as(index, server, request, path)
        fields = form(request.body)
        error = self.refusal(server, fields)
        self.wif["answers"].append({"t": request.t, "error": error})
        if error is not None:
            return Answer(400, {"error": error})
        return note_issued(self.recording.facts, self.grants.issue(index, server, fields.get("scope", "")))

    def may_give_up(self) -> str:
        """A client whose token request the authorization server refused (a grant it does not support,
        an assertion that does not verify) may exit non-zero: the CLIENT-WIF rows judge what it asked
        for, so its exit is no second verdict."""
        refused = [a["error"] for a in self.wif["answers"] if a["error"]]
        if refused:
            return f"its token request was refused ({refused[0]}): the CLIENT-WIF rows judge it"
        return super().may_give_up()

    def refusal(self, server: AuthServer, fields: dict[str, str]) -> str | None:
        """The error this token request gets (None: a token), as the official authorization server
        decides it: after a refusal every request; a grant other than JWT bearer; no assertion; an
        assertion that does not verify for this server; a refused scope."""
        if any(a["error"] for a in self.wif["answers"]):
            return (
                "invalid_request"
                if fields.get("grant_type") == JWT_BEARER_GRANT
                else "unsupported_grant_type"
            )
        if fields.get("grant_type") != JWT_BEARER_GRANT:
            return "unsupported_grant_type"
        if not fields.get("assertion"):
            return "invalid_request"
        if self.refuse_first or assertion_problem(self.wif, server.issuer(self.base), fields["assertion"]):
            return "invalid_grant"
        return next((REFUSED_SCOPES[s] for s in fields.get("scope", "").split() if s in REFUSED_SCOPES), None)


@scenario
class WifJwtBearerRefused(WifJwtBearer):
    name = WIF_REFUSED
    description = (
        "workload identity federation: the authorization server refuses the workload (invalid_grant)"
    )
    refuse_first = True
    allow_client_error = True


def accepted_audiences(issuer: str) -> set[str]:
    """What identifies the authorization server (RFC 7523 section 3): its issuer (with or without a
    trailing slash, as the official server accepts) or its token endpoint (the extension's example)."""
    return {issuer, issuer + "/", issuer + "/token"}


def assertion_problem(wif: dict[str, Any], issuer: str, assertion: str) -> str | None:
    """Why the authorization server refuses the assertion (None: it verifies, names this server and
    is not expired)."""
    checked = verified(wif["key"], assertion)
    if isinstance(checked, str):
        return checked
    claims = checked[1]
    if not accepted_audiences(issuer) & set(audiences(claims)):
        return f"its aud {claims.get('aud')!r} does not name this authorization server"
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or exp <= time.time():
        return f"it is expired (exp {exp!r})"
    return None


def _first(ctx: ClientContext, grant: str | None = None) -> Sent:
    """The client's first token request (of `grant`, when named)."""
    found = [
        s for s in AuthWire(ctx).token_requests() if grant is None or s.params.get("grant_type") == grant
    ]
    if found:
        return found[0]
    if grant is not None:
        ctx.absent("the client made no JWT bearer token request (CLIENT-WIF-001 judges the grant)")
    ctx.unless_failed("the client made no token request")
    missed("the client was given a workload JWT and made no token request")


@judged_in("wif-grant", "CLIENT-WIF-001", "the JWT bearer grant is asked for", (WIF,))
async def wif_grant(ctx: ClientContext) -> None:
    sent = _first(ctx)
    if sent.params.get("grant_type") != JWT_BEARER_GRANT:
        missed(f"the token request's grant_type is {sent.params.get('grant_type')!r}", form=sent.params)


def _claims(ctx: ClientContext) -> tuple[Sent, dict[str, Any]]:
    """The first JWT bearer request and its assertion's claims; an assertion that does not verify is
    SKIP here (CLIENT-WIF-002 judges it)."""
    sent = _first(ctx, JWT_BEARER_GRANT)
    checked = verified(ctx.recording.facts["wif"]["key"], str(sent.params.get("assertion", "")))
    if isinstance(checked, str):
        ctx.absent("the assertion is no JWT of the workload (CLIENT-WIF-002 judges it)")
    return sent, checked[1]


@judged_in("wif-assertion", "CLIENT-WIF-002", "the assertion is one JWT, the workload's", (WIF,))
async def wif_assertion(ctx: ClientContext) -> None:
    sent = _first(ctx, JWT_BEARER_GRANT)
    assertion = sent.params.get("assertion")
    if not assertion:
        missed("the JWT bearer token request carries no assertion", form=sent.params)
    checked = verified(ctx.recording.facts["wif"]["key"], str(assertion))
    if isinstance(checked, str):
        missed(f"the assertion is {checked}")


@judged_in("wif-audience", "CLIENT-WIF-003", "the assertion's audience is this authorization server", (WIF,))
async def wif_audience(ctx: ClientContext) -> None:
    _, claims = _claims(ctx)
    issuer = str(AuthWire(ctx).servers[0]["issuer"])
    if not accepted_audiences(issuer) & set(audiences(claims)):
        missed(f"the assertion's aud {claims.get('aud')!r} does not identify this server ({issuer})")


@judged_in("wif-expiry", "CLIENT-WIF-004", "the assertion is not expired when presented", (WIF,))
async def wif_expiry(ctx: ClientContext) -> None:
    sent, claims = _claims(ctx)
    presented = ctx.recording.facts["wif"]["began"] + sent.arrival.t
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or exp <= presented:
        missed(f"the assertion's exp {exp!r} is not after the moment it was presented ({int(presented)})")


@judged_in(
    "wif-no-retry",
    "CLIENT-WIF-005",
    "after a refused JWT bearer grant, no retry nor other grant",
    (WIF_REFUSED,),
)
async def wif_no_retry(ctx: ClientContext) -> None:
    answers = ctx.recording.facts["wif"]["answers"]
    refused = next((a for a in answers if a["error"]), None)
    if refused is None:
        ctx.absent("the authorization server refused no token request of the client")
    later = [s for s in AuthWire(ctx).token_requests() if s.arrival.t > refused["t"]]
    if later:
        grants = [s.params.get("grant_type") for s in later]
        missed(
            f"after the token request was refused ({refused['error']}) the client asked again: {grants}",
            grants=grants,
        )


@judged_in("wif-bearer", "CLIENT-WIF-006", "the access token is sent as a bearer token", (WIF,))
async def wif_bearer(ctx: ClientContext) -> None:
    await bearer_after_grant(ctx)
