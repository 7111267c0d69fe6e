"""The DPoP rows (CLIENT-DPOP-001 to -006): what the client sent in `auth/dpop` and `auth/dpop-nonce`,
read from the raw recording (each request's `DPoP` and `Authorization` headers) and judged by RFC 9449
(`dpop_proof.py` reads a proof). What the scenario gave (the tokens it bound and to which key, the
nonces, when it challenged) is in `recording.facts["dpop"]`. Extension rows: not scored unless claimed.

One defect, one verdict: a client that never obtained a DPoP-bound token fails the token request's row
(-001) and the rows about presenting such a token SKIP; a client that was never challenged for a nonce
SKIPs the nonce rows.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from typing import Any

from conformance.pack_api import Arrival, ClientContext, missed, weak
from conformance_packs.client.auth_checks import judged_in
from conformance_packs.client.auth_dpop import DPOP, DPOP_NONCE
from conformance_packs.client.auth_wire import AuthWire, Sent, path_of
from conformance_packs.client.dpop_proof import ProofError, header_values, read_proof

BOTH = (DPOP, DPOP_NONCE)
NO_BOUND_TOKEN = "the client obtained no DPoP-bound token (CLIENT-DPOP-001 judges its token request)"


class DpopWire(AuthWire):
    """The recording of a DPoP run, with what the scenario bound and when."""

    def __init__(self, ctx: ClientContext) -> None:
        super().__init__(ctx)
        self.dpop: dict[str, Any] = ctx.recording.facts.get("dpop") or {}
        self.bound: dict[str, dict[str, Any]] = self.dpop.get("bound") or {}

    def arrived(self, arrival: Arrival) -> float:
        return float(self.dpop.get("t0", 0.0)) + arrival.t

    def token_url(self, sent: Sent) -> str:
        return str(self.servers[sent.server]["metadata"]["token_endpoint"])

    def mcp_requests(self) -> list[Arrival]:
        return [a for a in self.arrivals if path_of(a) == "/mcp"]

    def after_binding(self) -> list[Arrival]:
        """The MCP requests after the first DPoP-bound token was issued; none bound is SKIP."""
        if not self.bound:
            self.ctx.absent(NO_BOUND_TOKEN)
        first = min(float(b["t"]) for b in self.bound.values())
        return [a for a in self.mcp_requests() if a.t > first]


def presented(arrival: Arrival) -> tuple[str, str]:
    """(scheme, token) of the request's Authorization header."""
    scheme, _, token = (arrival.headers.get("authorization") or "").partition(" ")
    return scheme, token.strip()


def claims_of(value: str) -> dict[str, Any]:
    """A proof's claims as sent, unverified ({} when it is no JWT): for what a broken proof still says."""
    parts = value.split(".")
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


@judged_in("dpop-token-proof", "CLIENT-DPOP-001", "the token request carries a valid DPoP proof", BOTH)
async def token_request_proof(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    exchanges = wire.code_exchanges()
    if not exchanges:
        ctx.unless_failed("the client made no token request")
        weak("the client made no token request, no DPoP-bound token asked for (the official check fails it)")
    for number, sent in enumerate(exchanges, 1):
        values = header_values(sent.arrival.raw_headers)
        if not values:
            missed(f"token request {number} carries no DPoP header: it asks for an unbound (Bearer) token")
        try:
            read_proof(values, "POST", wire.token_url(sent), wire.arrived(sent.arrival))
        except ProofError as exc:
            missed(f"token request {number}: {exc}", proof=values)


@judged_in("dpop-scheme", "CLIENT-DPOP-002", "the DPoP-bound token is sent with the DPoP scheme", BOTH)
async def auth_scheme(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    requests = wire.after_binding()
    if not requests:
        ctx.unless_failed("the client sent no MCP request after it obtained its token")
        weak("the client obtained a DPoP-bound token and sent no MCP request with it")
    for arrival in requests:
        scheme, token = presented(arrival)
        if scheme.lower() != "dpop" or token not in wire.bound or "access_token=" in arrival.path:
            header = arrival.headers.get("authorization")
            missed(f"an MCP request after the grant carried Authorization {header!r}", path=arrival.path)


@judged_in("dpop-request-proof", "CLIENT-DPOP-003", "each request with the token has a proof for it", BOTH)
async def request_proof(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    judged = [a for a in wire.after_binding() if presented(a)[1] in wire.bound]
    if not judged:
        ctx.absent("the client presented its DPoP-bound token on no MCP request (CLIENT-DPOP-002 judges it)")
    for arrival in judged:
        token = presented(arrival)[1]
        values = header_values(arrival.raw_headers)
        try:
            proof = read_proof(values, arrival.method, wire.facts["mcp_url"], wire.arrived(arrival), token)
        except ProofError as exc:
            missed(f"{arrival.method} /mcp with the token: {exc}", proof=values)
        if proof.jkt != wire.bound[token]["jkt"]:
            missed(f"{arrival.method} /mcp: the proof's key (thumbprint {proof.jkt}) is not the token's key")


@judged_in("dpop-jti", "CLIENT-DPOP-004", "no two proofs for one URI share a jti", BOTH)
async def unique_jti(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for arrival in wire.arrivals:
        for value in header_values(arrival.raw_headers):
            claims = claims_of(value)
            if isinstance(claims.get("jti"), str):
                seen[(str(claims.get("htu")), claims["jti"])] += 1
    if not seen:
        ctx.absent("the client sent no DPoP proof with a jti (CLIENT-DPOP-001 judges its proofs)")
    again = sorted(f"{jti} ({count} times, htu {htu})" for (htu, jti), count in seen.items() if count > 1)
    if again:
        missed(f"proofs for the same URI reuse a jti: {', '.join(again)}")


def _nonce_followed(ctx: ClientContext, after: list[Arrival], nonce: str, where: str) -> None:
    """Every proof sent to `where` after its nonce was supplied carries it; none sent is WARN."""
    with_proof = [a for a in after if header_values(a.raw_headers)]
    if not with_proof:
        ctx.unless_failed(f"the client did not retry at the {where} after use_dpop_nonce")
        weak(
            f"the client did not retry at the {where} after use_dpop_nonce (RFC 9449: it is expected to; "
            "the official check fails this)"
        )
    for arrival in with_proof:
        sent = [claims_of(v).get("nonce") for v in header_values(arrival.raw_headers)]
        if sent != [nonce]:
            missed(
                f"a proof sent to the {where} after it supplied DPoP-Nonce {nonce!r} has nonce {sent[0]!r}",
                path=arrival.path,
            )


@judged_in("dpop-as-nonce", "CLIENT-DPOP-005", "the token endpoint's nonce in the next proofs", (DPOP_NONCE,))
async def as_nonce(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    challenged = wire.dpop.get("as_challenged") or []
    if not challenged:
        ctx.absent("the token endpoint never answered a valid proof with use_dpop_nonce (CLIENT-DPOP-001)")
    after = [s.arrival for s in wire.token_requests() if s.arrival.t > min(challenged)]
    _nonce_followed(ctx, after, str(wire.dpop["as_nonce"]), "token endpoint")


@judged_in("dpop-rs-nonce", "CLIENT-DPOP-006", "the MCP server's nonce is in the next proofs", (DPOP_NONCE,))
async def rs_nonce(ctx: ClientContext) -> None:
    wire = DpopWire(ctx)
    challenged = wire.dpop.get("rs_challenged") or []
    if not challenged:
        ctx.absent("the MCP server never answered a valid proof with use_dpop_nonce (CLIENT-DPOP-003)")
    after = [a for a in wire.mcp_requests() if a.t > min(challenged)]
    _nonce_followed(ctx, after, str(wire.dpop["rs_nonce"]), "MCP server")
