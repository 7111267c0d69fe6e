"""Mutants of the reference client's DPoP (conformance_reference/client_auth.py, client_dpop.py): each the
reference with one planted defect, failing exactly the CLIENT-DPOP row it names (tests/packs/client/
test_client_dpop.py). `python -m tests.servers.client_dpop_mutants DEFECT URL`, by the official client
contract like the reference."""

from __future__ import annotations

import sys
from typing import Any

import httpx

from conformance_reference.client import ReferenceClient, main
from conformance_reference.client_auth import OAuthFlow
from conformance_reference.client_dpop import DpopKey
from tests.servers.client_auth_mutants import with_flow


class NoTokenProof(OAuthFlow):
    """CLIENT-DPOP-001: no proof at the token endpoint (an unbound Bearer token comes back, and is used)."""

    def token_proof(self, url: str) -> dict[str, str]:
        return {}


class BearerScheme(OAuthFlow):
    """CLIENT-DPOP-002: the DPoP-bound token sent with the Bearer scheme (the proofs still right)."""

    def dpop_scheme(self) -> str:
        return "Bearer"


class NoAth(OAuthFlow):
    """CLIENT-DPOP-003: the resource's proofs without ath."""

    def resource_proof(self, request: httpx.Request) -> str:
        assert self.dpop is not None
        return self.dpop.proof(request.method, str(request.url), nonce=self.rs_nonce)


class FixedJti(DpopKey):
    def jti(self) -> str:
        return "the-same-jti"


class ReusesJti(OAuthFlow):
    """CLIENT-DPOP-004: every proof has the same jti."""

    def dpop_key(self, metadata: dict[str, Any]) -> DpopKey | None:
        found = super().dpop_key(metadata)
        return found if found is None or isinstance(found, FixedJti) else FixedJti()


class IgnoresAsNonce(OAuthFlow):
    """CLIENT-DPOP-005: retries the token request without the authorization server's nonce (and gives up)."""

    def token_proof(self, url: str) -> dict[str, str]:
        self.as_nonce = None
        return super().token_proof(url)


class IgnoresRsNonce(OAuthFlow):
    """CLIENT-DPOP-006: retries the MCP request without the MCP server's nonce (and gives up)."""

    def resource_proof(self, request: httpx.Request) -> str:
        self.rs_nonce = None
        return super().resource_proof(request)


DPOP, NONCE = "auth/dpop", "auth/dpop-nonce"
#: defect -> (the mutant, the row it must fail and nothing else, the scenario and revision it is played at).
MUTANTS: dict[str, tuple[type[ReferenceClient], str, str, str]] = {
    "no-token-proof": (with_flow(NoTokenProof), "CLIENT-DPOP-001", DPOP, "2025-11-25"),
    "bearer-scheme": (with_flow(BearerScheme), "CLIENT-DPOP-002", DPOP, "2026-07-28"),
    "no-ath": (with_flow(NoAth), "CLIENT-DPOP-003", NONCE, "2025-11-25"),
    "reuses-jti": (with_flow(ReusesJti), "CLIENT-DPOP-004", DPOP, "2025-11-25"),
    "ignores-as-nonce": (with_flow(IgnoresAsNonce, forgiving=True), "CLIENT-DPOP-005", NONCE, "2025-11-25"),
    "ignores-rs-nonce": (with_flow(IgnoresRsNonce, forgiving=True), "CLIENT-DPOP-006", NONCE, "2026-07-28"),
}


if __name__ == "__main__":
    sys.exit(main(MUTANTS[sys.argv[1]][0], sys.argv[2:]))
