"""The OAuth client credentials extension (`io.modelcontextprotocol/oauth-client-credentials`, SEP-1046):
the client authenticates as itself, with a client secret (HTTP Basic) or a JWT it signs (RFC 7523
private_key_jwt), and gets a token by the client credentials grant. Its rows are extension rows: their
cases show their verdict but fail no run (an extension is claimed, not required). The credentials come
in MCP_CONFORMANCE_CONTEXT, with the official suite's key names.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import ClientContext, missed, scenario
from conformance_packs.client.auth_checks import judged_in
from conformance_packs.client.auth_scenarios import AuthScenario
from conformance_packs.client.auth_server import AuthServer
from conformance_packs.client.auth_wire import AuthWire, Sent

CLIENT_ID = "conformance-test-client"
CLIENT_SECRET = "conformance-test-secret"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
CC_BASIC, CC_JWT = "auth/client-credentials-basic", "auth/client-credentials-jwt"


@scenario
class ClientCredentialsBasic(AuthScenario):
    name = CC_BASIC
    unscored_track = "extension"
    description = "the client credentials grant, authenticated with client_secret_basic"
    context = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    servers = (AuthServer(grant_types=("client_credentials",), auth_methods=("client_secret_basic",)),)


@scenario
class ClientCredentialsJwt(AuthScenario):
    """The key pair is made per run: the private key goes to the client, the public one to the facts."""

    name = CC_JWT
    unscored_track = "extension"
    description = "the client credentials grant, authenticated with a JWT the client signs (private_key_jwt)"
    servers = (AuthServer(grant_types=("client_credentials",), auth_methods=("private_key_jwt",)),)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        from joserfc.jwk import ECKey

        key = ECKey.generate_key("P-256", private=True)
        pem = key.as_pem(private=True).decode("ascii")
        self.context = {"client_id": CLIENT_ID, "private_key_pem": pem, "signing_algorithm": "ES256"}  # type: ignore[misc]
        self.recording.facts["client_key"] = key.as_dict(private=False)


def _token_request(ctx: ClientContext) -> Sent:
    found = AuthWire(ctx).token_requests()
    if not found:
        ctx.unless_failed("the client made no token request")
        missed("the client was given client credentials and made no token request")
    return found[0]


@judged_in("cc-grant", "CLIENT-AUTH-026", "the client credentials grant is asked for", (CC_BASIC, CC_JWT))
async def cc_grant(ctx: ClientContext) -> None:
    sent = _token_request(ctx)
    if sent.params.get("grant_type") != "client_credentials":
        missed(f"the token request's grant_type is {sent.params.get('grant_type')!r}", form=sent.params)


@judged_in("cc-basic", "CLIENT-AUTH-028", "the given client secret authenticates it (Basic)", (CC_BASIC,))
async def cc_basic(ctx: ClientContext) -> None:
    sent = _token_request(ctx)
    if sent.basic == (CLIENT_ID, CLIENT_SECRET):
        return
    if sent.params.get("client_secret") == CLIENT_SECRET and sent.params.get("client_id") == CLIENT_ID:
        ctx.miss_should(
            "the client authenticated with client_secret_post; the server supports client_secret_basic"
        )
        return
    missed(f"the token request did not authenticate with the given credentials (Basic: {sent.basic})")


def _claims(ctx: ClientContext, assertion: str) -> dict[str, Any]:
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey

    try:
        return dict(jwt.decode(assertion, ECKey.import_key(ctx.recording.facts["client_key"])).claims)
    except (JoseError, ValueError) as exc:
        missed(f"the client assertion is no JWT signed with the given key: {exc}")


@judged_in(
    "cc-jwt",
    "CLIENT-AUTH-027",
    "the client assertion is a JWT of RFC 7523 signed by the given key",
    (CC_JWT,),
)
async def cc_jwt(ctx: ClientContext) -> None:
    sent = _token_request(ctx)
    if sent.params.get("client_assertion_type") != JWT_BEARER:
        missed(f"client_assertion_type is {sent.params.get('client_assertion_type')!r}, not {JWT_BEARER}")
    claims = _claims(ctx, str(sent.params.get("client_assertion", "")))
    for claim in ("iss", "sub"):
        if claims.get(claim) != CLIENT_ID:
            missed(f"the assertion's {claim} is {claims.get(claim)!r}, not the client ID {CLIENT_ID!r}")
    server = AuthWire(ctx).servers[0]
    aud = claims.get("aud")
    audiences: list[Any] = aud if isinstance(aud, list) else [aud]
    accepted = {server["issuer"], server["issuer"] + "/", server["metadata"]["token_endpoint"]}
    if not accepted & set(audiences) or "exp" not in claims:
        missed(
            f"the assertion's aud {claims.get('aud')!r} (exp {claims.get('exp')!r}) does not name this server"
        )
