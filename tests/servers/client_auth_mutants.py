"""Mutants of the reference client's OAuth flow (conformance_reference/client_auth.py): each the
reference with one planted defect, failing exactly the CLIENT-AUTH row it names (tests/packs/client/
test_client_auth.py). `python -m tests.servers.client_auth_mutants DEFECT URL`, by the official client
contract like the reference."""

from __future__ import annotations

import sys
from typing import Any

import httpx

from conformance_reference.client import ReferenceClient, main
from conformance_reference.client_auth import (
    CIMD_URL,
    AuthFailure,
    Challenge,
    OAuthFlow,
    Registration,
)
from tests.servers.client_grant_mutants import (
    ExchangesForTheResource,
    ExpiredJwt,
    NoAssertion,
    OtherGrant,
    PresentsTheIdToken,
    RetriesGrant,
    WrongAudienceJwt,
)
from tests.servers.client_mutants import LegacyOnly


def with_flow(flow: type[OAuthFlow], *, forgiving: bool = False) -> type[ReferenceClient]:
    """A reference client whose OAuth flow is `flow`; a forgiving one exits 0 when the flow gives up
    (so the contract case passes and only the planted row speaks)."""

    class Mutant(ReferenceClient):
        def oauth(self, url: str) -> httpx.Auth:
            return flow(url, self.revision)

        async def open(self) -> None:
            try:
                await super().open()
            except AuthFailure:
                if not forgiving:
                    raise
                self.gave_up = True

        async def act(self) -> None:
            if getattr(self, "gave_up", False):
                return
            try:
                await super().act()
            except AuthFailure:
                if not forgiving:
                    raise

    Mutant.__name__ = Mutant.__qualname__ = flow.__name__ + "Client"
    return Mutant


class RootPrmFirst(OAuthFlow):
    """CLIENT-AUTH-001: the root well-known PRM first, whatever the challenge names."""

    def prm_candidates(self, challenge: Challenge) -> list[str]:
        given = super().prm_candidates(Challenge())
        return [given[-1], *given[:-1]]


class RootMetadataFirst(OAuthFlow):
    """CLIENT-AUTH-002: an issuer with a path asked at the root RFC 8414 URI first."""

    def metadata_candidates(self, issuer: str) -> list[str]:
        origin = issuer[: issuer.index("/", len("http://"))] if issuer.count("/") > 2 else issuer
        return [origin + "/.well-known/oauth-authorization-server", *super().metadata_candidates(issuer)]


class NoOAuth(OAuthFlow):
    """CLIENT-AUTH-003: gives up at the 401 (and exits 0)."""

    def authorize(self, challenge: Challenge, step_up: bool) -> Any:
        raise AuthFailure("planted: no authorization")
        yield


class TokenInQuery(OAuthFlow):
    """CLIENT-AUTH-004: the token also in the query string."""

    def sign(self, request: httpx.Request) -> None:
        super().sign(request)
        if self.token:
            request.url = request.url.copy_add_param("access_token", self.token)


class IgnoresCimd(OAuthFlow):
    """CLIENT-AUTH-005: registers dynamically though the server offers client ID metadata documents."""

    def register(self, issuer: str, metadata: dict[str, Any]) -> Any:
        return (
            yield from super().register(issuer, {**metadata, "client_id_metadata_document_supported": False})
        )


class WrongPreRegisteredSecret(OAuthFlow):
    """CLIENT-AUTH-006: the pre-registered client ID with another secret."""

    def register(self, issuer: str, metadata: dict[str, Any]) -> Any:
        found = yield from super().register(issuer, metadata)
        return Registration(found.client_id, "not-the-secret", found.method)


class NoClientAuthentication(OAuthFlow):
    """CLIENT-AUTH-007: never authenticates at the token endpoint, secret or not."""

    def token_request(self, client: Registration, fields: dict[str, str]) -> Any:
        return super().token_request(Registration(client.client_id), fields)


class PlainMethodNamed(OAuthFlow):
    """CLIENT-AUTH-008: names code_challenge_method plain (the challenge is still S256's)."""

    def authorization_params(self, *args: Any) -> dict[str, str]:
        return {**super().authorization_params(*args), "code_challenge_method": "plain"}


class WrongVerifier(OAuthFlow):
    """CLIENT-AUTH-009: a code verifier that is not the challenge's."""

    def token_request(self, client: Registration, fields: dict[str, str]) -> Any:
        return super().token_request(client, {**fields, "code_verifier": "x" * 64})


class NoTokenResource(OAuthFlow):
    """CLIENT-AUTH-010: no resource parameter in the token request."""

    def token_request(self, client: Registration, fields: dict[str, str]) -> Any:
        fields.pop("resource", None)
        return super().token_request(client, fields)


class UppercaseResource(OAuthFlow):
    """CLIENT-AUTH-011: the resource with an upper-case scheme (not the published identifier)."""

    def authorize(self, challenge: Challenge, step_up: bool) -> Any:
        original = self.discover

        def discover(challenge: Challenge) -> Any:
            prm, issuer, metadata = yield from original(challenge)
            return {**prm, "resource": "HTTP" + str(prm["resource"])[4:]}, issuer, metadata

        self.discover = discover  # type: ignore[method-assign]
        return (yield from super().authorize(challenge, step_up))


class SlashedResource(OAuthFlow):
    """CLIENT-AUTH-011 (WARN, the canonical URI's SHOULD): a pathless published resource sent with
    the "/" a URL parser adds, as the Python mcp SDK 1.x does."""

    def authorize(self, challenge: Challenge, step_up: bool) -> Any:
        original = self.discover

        def discover(challenge: Challenge) -> Any:
            prm, issuer, metadata = yield from original(challenge)
            return {**prm, "resource": str(prm["resource"]) + "/"}, issuer, metadata

        self.discover = discover  # type: ignore[method-assign]
        return (yield from super().authorize(challenge, step_up))


class NoScope(OAuthFlow):
    """CLIENT-AUTH-012: never asks for a scope."""

    def scope_for(self, *args: Any) -> list[str]:
        return []


class StaleStepUp(OAuthFlow):
    """CLIENT-AUTH-013: a step-up that asks only for the scopes of before (and gives up, exit 0)."""

    def scope_for(
        self, challenge: Challenge, prm: dict[str, Any], metadata: dict, step_up: bool
    ) -> list[str]:
        return list(self.scopes) if step_up else super().scope_for(challenge, prm, metadata, step_up)


class NoUnion(OAuthFlow):
    """CLIENT-AUTH-014: a step-up that drops the scopes asked for before."""

    def scope_for(
        self, challenge: Challenge, prm: dict[str, Any], metadata: dict, step_up: bool
    ) -> list[str]:
        return super().scope_for(challenge, prm, metadata, False)


class NoRetryLimit(OAuthFlow):
    """CLIENT-AUTH-015: keeps re-authorizing."""

    def attempt_limit(self) -> int:
        return 20


class AnyResource(OAuthFlow):
    """CLIENT-AUTH-016: uses protected resource metadata for any resource."""

    def accept_prm(self, document: Any, fetched: str = "") -> bool:
        return isinstance(document, dict)


class AlwaysOffline(OAuthFlow):
    """CLIENT-AUTH-017: asks for offline_access whether or not it is listed."""

    def scope_for(self, *args: Any) -> list[str]:
        return [*super().scope_for(*args), "offline_access"]


class NoRefreshGrant(OAuthFlow):
    """CLIENT-AUTH-018: registers without the refresh_token grant type."""

    def registration_body(self, metadata: dict[str, Any]) -> dict[str, Any]:
        return {**super().registration_body(metadata), "grant_types": ["authorization_code"]}


class NoReregistration(OAuthFlow):
    """CLIENT-AUTH-019: meets a second authorization server with a metadata document URL instead of
    registering (no credentials of the first reused)."""

    def register(self, issuer: str, metadata: dict[str, Any]) -> Any:
        if self.registrations:
            return Registration(CIMD_URL)
        return (yield from super().register(issuer, metadata))


class ReusesCredentials(OAuthFlow):
    """CLIENT-AUTH-020: registers with the new server, then presents the first server's client ID."""

    def register(self, issuer: str, metadata: dict[str, Any]) -> Any:
        first = next(iter(self.registrations.values()), None)
        found = yield from super().register(issuer, metadata)
        return first or found


class IgnoresIss(OAuthFlow):
    """CLIENT-AUTH-021: never compares iss."""

    def accept_response(self, answer: dict[str, str], state: str, issuer: str, metadata: dict) -> None:
        super().accept_response({k: v for k, v in answer.items() if k != "iss"}, state, issuer, {})


class AcceptsMissingIss(OAuthFlow):
    """CLIENT-AUTH-022: accepts a response without iss though the metadata advertises it."""

    def accept_response(self, answer: dict[str, str], state: str, issuer: str, metadata: dict) -> None:
        plain = {k: v for k, v in metadata.items() if k != "authorization_response_iss_parameter_supported"}
        super().accept_response(answer, state, issuer, plain)


class TrustsMetadataIssuer(OAuthFlow):
    """CLIENT-AUTH-023: uses metadata whatever issuer it names."""

    def accept_metadata(self, document: Any, issuer: str) -> bool:
        return isinstance(document, dict) and super().accept_metadata({**document, "issuer": issuer}, issuer)


class NoApplicationType(OAuthFlow):
    """CLIENT-AUTH-024: registers without application_type."""

    def registration_body(self, metadata: dict[str, Any]) -> dict[str, Any]:
        body = super().registration_body(metadata)
        del body["application_type"]
        return body


class NoState(OAuthFlow):
    """CLIENT-AUTH-025: no state in the authorization request (nor checked)."""

    def authorization_params(self, *args: Any) -> dict[str, str]:
        params = super().authorization_params(*args)
        del params["state"]
        return params

    def accept_response(self, answer: dict[str, str], state: str, issuer: str, metadata: dict) -> None:
        super().accept_response({**answer, "state": state}, state, issuer, metadata)


class PasswordGrant(OAuthFlow):
    """CLIENT-AUTH-026: asks for another grant than client_credentials (and gives up, exit 0)."""

    def token_request(self, client: Registration, fields: dict[str, str]) -> Any:
        return super().token_request(client, {**fields, "grant_type": "password"})


class ForeignAssertion(OAuthFlow):
    """CLIENT-AUTH-027: an assertion naming another client as iss and sub."""

    def assertion(self, client_id: str, audience: str) -> str:
        return super().assertion("someone-else", audience)


class GuessesEndpoints(OAuthFlow):
    """CLIENT-AUTH-029 (2025-03-26): never asks for the metadata; knows the endpoints beforehand."""

    def base_url_discovery(self) -> Any:
        base = self.mcp_url.rsplit("/", 1)[0]
        metadata = {**self.default_endpoints(base + "/oauth"), "issuer": base}
        return {"resource": self.mcp_url}, base, metadata
        yield


class DefaultsAtOnce(OAuthFlow):
    """CLIENT-AUTH-030 (2025-03-26): the default endpoints without trying the metadata first."""

    def base_url_discovery(self) -> Any:
        base = self.mcp_url.rsplit("/", 1)[0]
        return {"resource": self.mcp_url}, base, self.default_endpoints(base)
        yield


class NoIssuerWithoutMetadata(OAuthFlow):
    """Not a defect: with no metadata (2025-03-26's default endpoints) the client knows no issuer
    identifier, so an `iss` in the authorization response matches none and is refused (RFC 9207
    section 2.4), as the Python mcp SDK 2.x does. The fallback scenario once sent one (the official
    scenario sends none) and failed such a client."""

    def default_endpoints(self, base: str) -> dict[str, Any]:
        return {k: v for k, v in super().default_endpoints(base).items() if k != "issuer"}

    def accept_response(self, answer: dict[str, str], state: str, issuer: str, metadata: dict) -> None:
        if "issuer" not in metadata and "iss" in answer:
            raise AuthFailure(f"an iss {answer['iss']!r} where no issuer is known")
        super().accept_response(answer, state, issuer, metadata)


#: defect -> (the mutant, the row it must fail and nothing else, the scenario and revision it is played at).
MUTANTS: dict[str, tuple[type[ReferenceClient], str, str, str]] = {
    "root-prm-first": (with_flow(RootPrmFirst), "CLIENT-AUTH-001", "auth/metadata-default", "2025-11-25"),
    "root-metadata-first": (
        with_flow(RootMetadataFirst),
        "CLIENT-AUTH-002",
        "auth/metadata-var2",
        "2025-11-25",
    ),
    "no-oauth": (with_flow(NoOAuth, forgiving=True), "CLIENT-AUTH-003", "auth/metadata-var1", "2026-07-28"),
    "token-in-query": (
        with_flow(TokenInQuery),
        "CLIENT-AUTH-004",
        "auth/scope-omitted-when-undefined",
        "2025-11-25",
    ),
    "ignores-cimd": (with_flow(IgnoresCimd), "CLIENT-AUTH-005", "auth/basic-cimd", "2025-11-25"),
    "wrong-secret": (
        with_flow(WrongPreRegisteredSecret),
        "CLIENT-AUTH-006",
        "auth/pre-registration",
        "2025-11-25",
    ),
    "no-client-auth": (
        with_flow(NoClientAuthentication),
        "CLIENT-AUTH-007",
        "auth/token-endpoint-auth-basic",
        "2025-11-25",
    ),
    "plain-method": (
        with_flow(PlainMethodNamed),
        "CLIENT-AUTH-008",
        "auth/token-endpoint-auth-none",
        "2026-07-28",
    ),
    "wrong-verifier": (
        with_flow(WrongVerifier),
        "CLIENT-AUTH-009",
        "auth/token-endpoint-auth-none",
        "2025-11-25",
    ),
    "no-token-resource": (
        with_flow(NoTokenResource),
        "CLIENT-AUTH-010",
        "auth/token-endpoint-auth-post",
        "2025-11-25",
    ),
    "uppercase-resource": (
        with_flow(UppercaseResource),
        "CLIENT-AUTH-011",
        "auth/scope-from-scopes-supported",
        "2026-07-28",
    ),
    "no-scope": (with_flow(NoScope), "CLIENT-AUTH-012", "auth/scope-from-www-authenticate", "2025-11-25"),
    "stale-step-up": (
        with_flow(StaleStepUp, forgiving=True),
        "CLIENT-AUTH-013",
        "auth/scope-step-up",
        "2025-11-25",
    ),
    "no-union": (with_flow(NoUnion), "CLIENT-AUTH-014", "auth/scope-step-up", "2026-07-28"),
    "no-retry-limit": (with_flow(NoRetryLimit), "CLIENT-AUTH-015", "auth/scope-retry-limit", "2025-11-25"),
    "any-resource": (with_flow(AnyResource), "CLIENT-AUTH-016", "auth/resource-mismatch", "2026-07-28"),
    "always-offline": (
        with_flow(AlwaysOffline),
        "CLIENT-AUTH-017",
        "auth/offline-access-not-supported",
        "2026-07-28",
    ),
    "no-refresh-grant": (
        with_flow(NoRefreshGrant),
        "CLIENT-AUTH-018",
        "auth/offline-access-scope",
        "2026-07-28",
    ),
    "no-reregistration": (
        with_flow(NoReregistration),
        "CLIENT-AUTH-019",
        "auth/authorization-server-migration",
        "2026-07-28",
    ),
    "reuses-credentials": (
        with_flow(ReusesCredentials),
        "CLIENT-AUTH-020",
        "auth/authorization-server-migration",
        "2026-07-28",
    ),
    "ignores-iss": (with_flow(IgnoresIss), "CLIENT-AUTH-021", "auth/iss-wrong-issuer", "2026-07-28"),
    "accepts-missing-iss": (
        with_flow(AcceptsMissingIss),
        "CLIENT-AUTH-022",
        "auth/iss-supported-missing",
        "2026-07-28",
    ),
    "trusts-metadata-issuer": (
        with_flow(TrustsMetadataIssuer),
        "CLIENT-AUTH-023",
        "auth/metadata-issuer-mismatch",
        "2026-07-28",
    ),
    "no-application-type": (
        with_flow(NoApplicationType),
        "CLIENT-AUTH-024",
        "auth/metadata-default",
        "2026-07-28",
    ),
    "no-state": (with_flow(NoState), "CLIENT-AUTH-025", "auth/metadata-var3", "2025-11-25"),
    "password-grant": (
        with_flow(PasswordGrant, forgiving=True),
        "CLIENT-AUTH-026",
        "auth/client-credentials-basic",
        "2026-07-28",
    ),
    "foreign-assertion": (
        with_flow(ForeignAssertion),
        "CLIENT-AUTH-027",
        "auth/client-credentials-jwt",
        "2025-11-25",
    ),
    "cc-no-client-auth": (
        with_flow(NoClientAuthentication),
        "CLIENT-AUTH-028",
        "auth/client-credentials-basic",
        "2025-11-25",
    ),
    "guesses-endpoints": (
        with_flow(GuessesEndpoints),
        "CLIENT-AUTH-029",
        "auth/2025-03-26-oauth-metadata-backcompat",
        "2025-03-26",
    ),
    "defaults-at-once": (
        with_flow(DefaultsAtOnce),
        "CLIENT-AUTH-030",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "2025-03-26",
    ),
}
EMA, WIF = "auth/enterprise-managed-authorization", "auth/wif-jwt-bearer"
#: The assertion-grant extensions' rows (tests/servers/client_grant_mutants.py); a flow that is
#: refused gives up and exits 0 (forgiving), so only the planted row speaks.
MUTANTS |= {
    "exchange-for-resource": (
        with_flow(ExchangesForTheResource, forgiving=True),
        "CLIENT-EMA-001",
        EMA,
        "2025-11-25",
    ),
    "presents-id-token": (with_flow(PresentsTheIdToken, forgiving=True), "CLIENT-EMA-002", EMA, "2026-07-28"),
    "ema-no-client-auth": (
        with_flow(NoClientAuthentication, forgiving=True),
        "CLIENT-EMA-003",
        EMA,
        "2025-11-25",
    ),
    "ema-token-in-query": (with_flow(TokenInQuery), "CLIENT-EMA-004", EMA, "2026-07-28"),
    "other-grant": (with_flow(OtherGrant, forgiving=True), "CLIENT-WIF-001", WIF, "2025-11-25"),
    "no-assertion": (with_flow(NoAssertion, forgiving=True), "CLIENT-WIF-002", WIF, "2026-07-28"),
    "wrong-audience-jwt": (with_flow(WrongAudienceJwt, forgiving=True), "CLIENT-WIF-003", WIF, "2025-11-25"),
    "expired-jwt": (with_flow(ExpiredJwt, forgiving=True), "CLIENT-WIF-004", WIF, "2026-07-28"),
    "retries-grant": (with_flow(RetriesGrant), "CLIENT-WIF-005", "x-wif-jwt-bearer-refused", "2025-11-25"),
    "wif-token-in-query": (with_flow(TokenInQuery), "CLIENT-WIF-006", WIF, "2026-07-28"),
}


class PreviewsAuthorization(OAuthFlow):
    """Not a defect: each authorization URL fetched once before the browser opens it (FastMCP's
    pre-flight check), so the server sees the same authorization request twice. The step-up row once
    took the repeat for the step-up and warned a client that did step up."""

    def authorize(self, challenge: Challenge, step_up: bool) -> Any:
        inner = super().authorize(challenge, step_up)
        try:
            request = next(inner)
            while True:
                if request.method == "GET" and "/authorize?" in str(request.url):
                    yield httpx.Request("GET", request.url)  # the pre-flight, its answer unread
                request = inner.send((yield request))
        except StopIteration as done:
            return done.value


class LegacyNoApplicationType(LegacyOnly):
    """A client of the revisions before 2026-07-28 (the 1.x SDK lines) whose registration has no
    application_type, as those revisions allow: at a 2026-07-28 scenario it is the contract case's
    ERROR (it opened with initialize), and CLIENT-AUTH-024, a 2026-07-28 rule, SKIP blocked by it (one
    cause, one verdict), not a FAIL besides."""

    def oauth(self, url: str) -> httpx.Auth:
        return NoApplicationType(url, self.revision)


#: Clients of an earlier revision at a 2026-07-28 scenario: client -> (the client, the 2026-07-28 row
#: blocked by the contract case's ERROR, the scenario and revision it is played at).
LEGACY: dict[str, tuple[type[ReferenceClient], str, str, str]] = {
    "legacy-no-application-type": (
        LegacyNoApplicationType,
        "CLIENT-AUTH-024",
        "auth/metadata-default",
        "2026-07-28",
    ),
}
#: Defects below the row's level: defect -> (the mutant, the row it must WARN and nothing else, the
#: scenario and revision it is played at).
SOFT: dict[str, tuple[type[ReferenceClient], str, str, str]] = {
    "slashed-resource": (with_flow(SlashedResource), "CLIENT-AUTH-011", "auth/metadata-var2", "2025-11-25"),
}
#: Right clients the scenarios once judged wrong: variant -> (the client, the rows it must pass, the
#: scenario and revision it is played at); every case PASS or SKIP.
VARIANTS: dict[str, tuple[type[ReferenceClient], str, str, str]] = {
    "previews-authorization": (
        with_flow(PreviewsAuthorization),
        "CLIENT-AUTH-013",
        "auth/scope-step-up",
        "2026-07-28",
    ),
    "iss-needs-metadata": (
        with_flow(NoIssuerWithoutMetadata),
        "CLIENT-AUTH-030",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "2025-03-26",
    ),
}


if __name__ == "__main__":
    sys.exit(main((MUTANTS | SOFT | VARIANTS | LEGACY)[sys.argv[1]][0], sys.argv[2:]))
