"""The OAuth DPoP extension (`io.modelcontextprotocol/auth/dpop`, SEP-1932, which adopts RFC 9449 as it
is): the authorization server binds the access token to a key the client proves it holds, and the
protected resource takes the token only with a fresh proof signed by that key. Two scenarios, as the
official suite has them: `auth/dpop` (no server nonce) and `auth/dpop-nonce` (the token endpoint and the
MCP endpoint both demand a server-provided nonce, RFC 9449 sections 8 and 9).

The scenario's servers answer as RFC 9449 has them and as leniently as the official ones, so every row
can read what the client sent: a token request with a valid proof gets a token of type `DPoP` bound to
the proof's key (its thumbprint kept in `recording.facts["dpop"]["bound"]`), one without a proof an
unbound Bearer token (section 5: an authorization server MAY), one with a broken proof
`400 invalid_dpop_proof`; the MCP endpoint challenges a request without a token with `401` and
`WWW-Authenticate: DPoP`, and serves one with a token it issued whatever the proof (the checks judge
it). With nonces, a valid proof without the server's nonce gets `use_dpop_nonce` and a `DPoP-Nonce`
header (a fresh unpredictable value per run, as section 8 requires). The rows are extension rows: their
cases show their verdict but fail no run.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, ClassVar

from conformance.pack_api import Arrival, scenario
from conformance_packs.client.auth_scenarios import AuthScenario
from conformance_packs.client.auth_server import Answer, AuthServer, form
from conformance_packs.client.dpop_proof import ProofError, header_values, read_proof

DPOP, DPOP_NONCE = "auth/dpop", "auth/dpop-nonce"


@scenario
class Dpop(AuthScenario):
    name = DPOP
    unscored_track = "extension"
    description = "DPoP-bound tokens: the MCP server takes one only with a proof of the key it is bound to"
    scheme = "DPoP"
    servers = (AuthServer(dpop_algs=("ES256",)),)
    #: Whether the token endpoint and the MCP endpoint demand a server-provided nonce.
    nonces: ClassVar[bool] = False

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.dpop: dict[str, Any] = {
            #: The epoch of the recording's t = 0: an arrival's `t` plus this is when it came (for `iat`).
            "t0": time.time() - self.recording.now(),
            #: access token -> {"jkt": the key it is bound to, "t": when it was issued}
            "bound": {},
            "as_nonce": secrets.token_urlsafe(16) if self.nonces else None,
            "rs_nonce": secrets.token_urlsafe(16) if self.nonces else None,
            #: When a valid proof without the nonce was answered with use_dpop_nonce (arrival `t`s).
            "as_challenged": [],
            "rs_challenged": [],
        }
        self.recording.facts["dpop"] = self.dpop

    def arrived(self, request: Arrival) -> float:
        return float(self.dpop["t0"]) + request.t

    def serve_as(self, index: int, server: AuthServer, request: Arrival, path: str) -> Answer | None:
        if path == server.at + "/token" and request.method == "POST":
            return self.token(index, server, request)
        return super().serve_as(index, server, request, path)

    def token(self, index: int, server: AuthServer, request: Arrival) -> Answer:
        """A DPoP-bound token for a valid proof; Bearer without one; 400 for a broken one or, with
        nonces, for a proof without the server's nonce."""
        values = header_values(request.raw_headers)
        if not values:
            return self.grants.token(index, server, form(request.body))
        try:
            proof = read_proof(values, "POST", self.base + server.at + "/token", self.arrived(request))
        except ProofError as exc:
            return Answer(400, {"error": "invalid_dpop_proof", "error_description": str(exc)})
        if self.nonces and proof.nonce != self.dpop["as_nonce"]:
            self.dpop["as_challenged"].append(request.t)
            body = {"error": "use_dpop_nonce", "error_description": "a nonce is required"}
            return Answer(400, body, {"DPoP-Nonce": self.dpop["as_nonce"], "Cache-Control": "no-store"})
        answer = self.grants.token(index, server, form(request.body))
        if answer.status == 200:
            answer.body["token_type"] = "DPoP"
            self.dpop["bound"][answer.body["access_token"]] = {"jkt": proof.jkt, "t": request.t}
        return answer

    def token_of(self, request: Arrival) -> tuple[int, tuple[str, ...]] | None:
        """The grant of the token the request presents, by the DPoP scheme or (lenient) Bearer."""
        scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
        if scheme.lower() not in ("dpop", "bearer"):
            return None
        return self.grants.tokens.get(token.strip())

    def gate(self, request: Arrival, method: str | None) -> Answer | None:
        refused = super().gate(request, method)
        if refused is not None or not self.nonces:
            return refused
        token = (request.headers.get("authorization") or "").partition(" ")[2].strip()
        if token not in self.dpop["bound"]:
            return None
        try:
            values = header_values(request.raw_headers)
            proof = read_proof(values, request.method, self.mcp_url(), self.arrived(request), token)
        except ProofError:
            return None  # served: the rows judge the proof
        if proof.nonce == self.dpop["rs_nonce"]:
            return None
        self.dpop["rs_challenged"].append(request.t)
        answer = self.challenge(401, error="use_dpop_nonce")
        answer.headers = {**(answer.headers or {}), "DPoP-Nonce": self.dpop["rs_nonce"]}
        return answer


@scenario
class DpopNonce(Dpop):
    name = DPOP_NONCE
    description = "DPoP, with a nonce the token endpoint and the MCP server both demand (RFC 9449 8, 9)"
    nonces = True
