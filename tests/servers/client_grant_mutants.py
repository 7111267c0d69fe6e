"""Mutants of the reference client's assertion grants (conformance_reference/client_auth.py:
enterprise-managed authorization and workload identity federation): each the reference flow with one
planted defect, failing exactly the CLIENT-EMA or CLIENT-WIF row it names. They are played by
tests/servers/client_auth_mutants.py (its `MUTANTS` table), beside the other OAuth mutants."""

from __future__ import annotations

from typing import Any

from conformance_reference.client_auth import AuthFailure, OAuthFlow


class ExchangesForTheResource(OAuthFlow):
    """CLIENT-EMA-001: asks the IdP for an ID-JAG whose audience is the MCP server, not its
    authorization server (which then refuses it)."""

    def exchange_params(self, issuer: str, resource: str) -> dict[str, str]:
        return {**super().exchange_params(issuer, resource), "audience": resource}


class PresentsTheIdToken(OAuthFlow):
    """CLIENT-EMA-002: presents the ID token itself as the grant, not the ID-JAG it was given."""

    def grant_fields(self, assertion: str, resource: str) -> dict[str, str]:
        return super().grant_fields(str(self.context.get("idp_id_token", assertion)), resource)


class OtherGrant(OAuthFlow):
    """CLIENT-WIF-001: sends the workload JWT under another grant type."""

    def grant_fields(self, assertion: str, resource: str) -> dict[str, str]:
        return {**super().grant_fields(assertion, resource), "grant_type": "client_credentials"}


class NoAssertion(OAuthFlow):
    """CLIENT-WIF-002: the JWT bearer grant without its assertion."""

    def grant_fields(self, assertion: str, resource: str) -> dict[str, str]:
        fields = super().grant_fields(assertion, resource)
        del fields["assertion"]
        return fields


class WrongAudienceJwt(OAuthFlow):
    """CLIENT-WIF-003: presents the context's JWT made for another audience."""

    def workload_jwt(self) -> str:
        return str(self.context.get("wrong_audience_jwt", ""))


class ExpiredJwt(OAuthFlow):
    """CLIENT-WIF-004: presents the context's expired JWT."""

    def workload_jwt(self) -> str:
        return str(self.context.get("expired_jwt", ""))


class RetriesGrant(OAuthFlow):
    """CLIENT-WIF-005: asks again once its JWT bearer grant is refused."""

    def assertion_grant(self, *args: Any) -> Any:
        try:
            yield from super().assertion_grant(*args)
        except AuthFailure:
            yield from super().assertion_grant(*args)
