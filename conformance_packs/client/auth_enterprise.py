"""The enterprise-managed authorization extension (`io.modelcontextprotocol/enterprise-managed-
authorization`, SEP-990), as the official scenario `auth/enterprise-managed-authorization` plays it:
the client holds an ID token from the enterprise IdP, exchanges it at the IdP's token endpoint for an
ID-JAG (RFC 8693 token exchange), presents the ID-JAG to the MCP server's authorization server as a
JWT authorization grant (RFC 7523), authenticating with its own client credentials
(`client_secret_basic`), and calls the MCP server with the access token.

The IdP lives on the scenario's one listener under `/idp` (its issuer `ORIGIN/idp`); the
authorization server is at the origin, supporting the JWT bearer grant only. Its rows are extension
rows (CLIENT-EMA-001 to -004): their cases show their verdict but fail no run. What a check compares
with is in `recording.facts["ema"]` (the ID token given, the ID-JAGs the IdP issued, the IdP's path).
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import Arrival, ClientContext, blocked, missed, scenario
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
from conformance_packs.client.auth_server import Answer, AuthServer, basic_credentials, form
from conformance_packs.client.auth_wire import AuthWire, Sent, path_of

EMA = "auth/enterprise-managed-authorization"
#: The official scenario's names: the client at the authorization server, the client at the IdP.
CLIENT_ID, CLIENT_SECRET = "conformance-test-xaa-client", "conformance-test-xaa-secret"
IDP_CLIENT_ID, USER = "conformance-test-idp-client", "demo-user@example.com"
IDP = "/idp"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG, ID_TOKEN = "urn:ietf:params:oauth:token-type:id-jag", "urn:ietf:params:oauth:token-type:id_token"
JAG_TYP = "oauth-id-jag+jwt"


@scenario
class EnterpriseManaged(AuthScenario):
    """The IdP's key signs the ID token (audience: the client at the IdP) and the ID-JAGs; both are
    made per run. The context is made once the listener's origin is known."""

    name = EMA
    unscored_track = "extension"
    description = "enterprise-managed authorization: ID token -> ID-JAG (token exchange) -> access token"
    servers = (AuthServer(grant_types=(JWT_BEARER_GRANT,), auth_methods=("client_secret_basic",)),)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.idp_key = new_key()
        self.ema: dict[str, Any] = self.recording.facts.setdefault("ema", {"jags": []})

    @property
    def context(self) -> dict[str, Any]:  # type: ignore[override]
        idp = self.recording.facts["origin"] + IDP
        if "id_token" not in self.ema:
            claims = {"iss": idp, "sub": USER, "email": USER, "aud": IDP_CLIENT_ID}
            self.ema |= {"idp": idp, "id_token": sign(self.idp_key, claims, lifetime=3600)}
            self.ema["idp_key"] = public(self.idp_key)
        return {
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "idp_client_id": IDP_CLIENT_ID,
            "idp_id_token": self.ema["id_token"],
            "idp_issuer": idp,
            "idp_token_endpoint": idp + "/token",
        }

    def route(self, request: Arrival, path: str) -> Answer:
        idp = self.base + IDP
        if path == IDP + "/.well-known/openid-configuration" and request.method == "GET":
            endpoints = {"issuer": idp, "token_endpoint": idp + "/token", "jwks_uri": idp + "/jwks.json"}
            return Answer(200, endpoints | {"grant_types_supported": [TOKEN_EXCHANGE]})
        if path == IDP + "/token" and request.method == "POST":
            return self.exchange(form(request.body))
        return super().route(request, path)

    def serve_as(self, index: int, server: AuthServer, request: Arrival, path: str) -> Answer | None:
        if path == server.at + "/token" and request.method == "POST":
            answer = self.jwt_bearer(index, server, request)
            if answer.status >= 400:
                said = answer.body.get("error") if isinstance(answer.body, dict) else answer.status
                self.ema.setdefault("refused", []).append(said)
            return answer
        return super().serve_as(index, server, request, path)

    def may_give_up(self) -> str:
        """A client whose access token request the authorization server refused (no JWT bearer grant,
        an ID-JAG not for this server) may exit non-zero: the CLIENT-EMA rows judge what it asked for,
        so its exit is no second verdict."""
        refused = self.ema.get("refused")
        if refused:
            return f"its token request was refused ({refused[0]}): the CLIENT-EMA rows judge it"
        return super().may_give_up()

    def exchange(self, fields: dict[str, str]) -> Answer:
        """The IdP: an ID-JAG for the ID token it issued, naming the audience and resource asked for
        (the rows judge whether those were the right ones)."""
        if fields.get("grant_type") != TOKEN_EXCHANGE:
            return Answer(400, {"error": "unsupported_grant_type"})
        given = (
            fields.get("subject_token"),
            fields.get("subject_token_type"),
            fields.get("requested_token_type"),
        )
        if given != (self.ema.get("id_token"), ID_TOKEN, ID_JAG) or not fields.get("audience"):
            return Answer(400, {"error": "invalid_request"})
        claims = {"iss": self.ema["idp"], "sub": USER, "aud": fields["audience"], "client_id": CLIENT_ID}
        jag = sign(self.idp_key, claims | {"resource": fields.get("resource", "")}, typ=JAG_TYP)
        self.ema["jags"].append(jag)
        body = {"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A", "expires_in": 300}
        return Answer(200, body, {"Cache-Control": "no-store"})

    def jwt_bearer(self, index: int, server: AuthServer, request: Arrival) -> Answer:
        """The authorization server: an access token for an ID-JAG of this IdP naming this server and
        this resource, from the client its credentials authenticate."""
        fields = form(request.body)
        if fields.get("grant_type") != JWT_BEARER_GRANT:
            return Answer(400, {"error": "unsupported_grant_type"})
        if basic_credentials(request.headers.get("authorization")) != (CLIENT_ID, CLIENT_SECRET):
            return Answer(401, {"error": "invalid_client"})
        jag = fields.get("assertion", "")
        checked = verified(self.ema["idp_key"], jag) if jag in self.ema["jags"] else "unknown"
        issuer = server.issuer(self.base)
        if isinstance(checked, str) or not {issuer, issuer + "/"} & set(audiences(checked[1])):
            return Answer(400, {"error": "invalid_grant"})
        if checked[1].get("resource") != self.resource():
            return Answer(400, {"error": "invalid_grant", "error_description": "not this resource"})
        return note_issued(self.recording.facts, self.grants.issue(index, server, fields.get("scope", "")))


def _exchanges(ctx: ClientContext) -> list[dict[str, str]]:
    """The forms of the client's POSTs to the IdP's token endpoint, in order."""
    return [
        form(a.body) for a in ctx.recording.arrivals if a.method == "POST" and path_of(a) == IDP + "/token"
    ]


@judged_in(
    "ema-exchange", "CLIENT-EMA-001", "the ID token is exchanged at the IdP for an ID-JAG (RFC 8693)", (EMA,)
)
async def token_exchange(ctx: ClientContext) -> None:
    found = _exchanges(ctx)
    if not found:
        ctx.unless_failed("the client made no token exchange request")
        missed("the client was given an ID token and the IdP's token endpoint, and made no token exchange")
    sent, wire, ema = found[0], AuthWire(ctx), ctx.recording.facts["ema"]
    issuer = str(wire.servers[0]["issuer"])
    expected = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": ema["id_token"],
        "subject_token_type": ID_TOKEN,
        "resource": wire.facts.get("prm_resource"),
    }
    wrong = [name for name, value in expected.items() if sent.get(name) != value]
    if sent.get("audience") not in (issuer, issuer + "/"):
        wrong.append("audience")
    if wrong:
        shown = {name: sent.get(name) for name in wrong if name != "subject_token"}
        missed(
            f"the token exchange request's {', '.join(wrong)} not as the extension requires "
            f"(audience: the authorization server's issuer {issuer}; resource: the MCP server's)",
            sent=shown,
            expected={k: v for k, v in expected.items() if k in wrong and k != "subject_token"},
        )


def _grant_request(ctx: ClientContext) -> Sent:
    """The client's first request to the authorization server's token endpoint; none is FAIL when the
    IdP issued an ID-JAG, else SKIP (CLIENT-EMA-001 judges the exchange)."""
    found = AuthWire(ctx).token_requests()
    if found:
        return found[0]
    if not ctx.recording.facts["ema"]["jags"]:
        ctx.absent("the IdP issued no ID-JAG (CLIENT-EMA-001 judges the exchange)")
    ctx.unless_failed("the client made no access token request")
    missed("the client obtained an ID-JAG and made no access token request at the authorization server")


@judged_in(
    "ema-grant", "CLIENT-EMA-002", "the ID-JAG is presented as a JWT authorization grant (RFC 7523)", (EMA,)
)
async def jwt_grant(ctx: ClientContext) -> None:
    sent = _grant_request(ctx)
    jags = ctx.recording.facts["ema"]["jags"]
    if not jags:  # no grant to present: what it asked instead follows from the exchange it did not make
        ctx.unless_failed("the IdP issued no ID-JAG")
        blocked(
            "client.auth.ema-exchange." + EMA.removeprefix("auth/"),
            "the IdP issued no ID-JAG, so the client had none to present (CLIENT-EMA-001 judges why)",
        )
    if sent.params.get("grant_type") != JWT_BEARER_GRANT:
        missed(
            f"the access token request's grant_type is {sent.params.get('grant_type')!r}", form=sent.params
        )
    if sent.params.get("assertion") not in jags:
        missed("the access token request's assertion is not the ID-JAG the IdP issued")


@judged_in(
    "ema-client-auth", "CLIENT-EMA-003", "the client authenticates with its credentials (Basic)", (EMA,)
)
async def client_authentication(ctx: ClientContext) -> None:
    sent = _grant_request(ctx)
    if sent.basic == (CLIENT_ID, CLIENT_SECRET):
        return
    if (sent.params.get("client_id"), sent.params.get("client_secret")) == (CLIENT_ID, CLIENT_SECRET):
        ctx.miss_should(
            "the client authenticated with client_secret_post; the server lists client_secret_basic"
        )
        return
    missed(f"the access token request did not authenticate with the given credentials (Basic: {sent.basic})")


@judged_in("ema-bearer", "CLIENT-EMA-004", "the access token is sent as a bearer token", (EMA,))
async def ema_bearer(ctx: ClientContext) -> None:
    await bearer_after_grant(ctx)
