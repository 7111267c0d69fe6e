"""What the assertion-grant extensions share (enterprise-managed authorization and workload identity
federation, `auth_enterprise.py` and `auth_wif.py`): the JWTs their scenarios sign and verify, the
token the scenario issued for a grant, and the one judgement both make of the MCP requests after it
(the token sent as a bearer token).

Why the scenarios sign real JWTs (an ES256 key per run): a client may decode what it is given, and the
rows judge the assertion the client presented by verifying it, as the official scenarios do.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from conformance.pack_api import ClientContext, missed
from conformance_packs.client.auth_wire import AuthWire

JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The facts key the scenario fills with the access tokens it issued, in order.
ISSUED = "issued_tokens"


def new_key() -> Any:
    """A fresh EC P-256 key pair (joserfc `ECKey`)."""
    from joserfc.jwk import ECKey

    return ECKey.generate_key("P-256", private=True)


def public(key: Any) -> dict[str, Any]:
    return dict(key.as_dict(private=False))


def sign(key: Any, claims: dict[str, Any], typ: str | None = None, lifetime: int = 300) -> str:
    """An ES256 JWT of `claims` with `iat`, `exp` (now + `lifetime`, negative: already expired) and
    `jti` added; `typ` in the header when given."""
    from joserfc import jwt

    now = int(time.time())
    header = {"alg": "ES256", **({"typ": typ} if typ else {})}
    full = {"iat": now, "exp": now + lifetime, "jti": secrets.token_urlsafe(12), **claims}
    return str(jwt.encode(header, full, key))


def verified(jwk: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """(header, claims) of `token` when it is a JWT signed by the key `jwk`, else why not."""
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey

    try:
        decoded = jwt.decode(token, ECKey.import_key(jwk), algorithms=["ES256"])
    except (JoseError, ValueError, TypeError) as exc:
        return f"not a JWT signed by the given key ({type(exc).__name__}: {exc})"
    return dict(decoded.header), dict(decoded.claims)


def audiences(claims: dict[str, Any]) -> list[Any]:
    aud = claims.get("aud")
    return list(aud) if isinstance(aud, list) else [aud]


def note_issued(facts: dict[str, Any], answer: Any) -> Any:
    """Note the access token a token response (`auth_server.Answer`) carries in the recording's
    `facts` (what the bearer rows compare with); the answer is returned unchanged."""
    if isinstance(answer.body, dict) and "access_token" in answer.body:
        facts.setdefault(ISSUED, []).append(answer.body["access_token"])
    return answer


async def bearer_after_grant(ctx: ClientContext) -> None:
    """Every MCP request from the first one carrying a token on: `Bearer` with a token this scenario
    issued, never the token in the URL. No token issued: SKIP (the grant's rows judge why)."""
    issued = set(ctx.recording.facts.get(ISSUED) or [])
    if not issued:
        ctx.absent("the authorization server issued no access token (the grant's rows judge why)")
    posts = AuthWire(ctx).mcp_posts()
    first = next((i for i, a in enumerate(posts) if "authorization" in a.headers), None)
    if first is None:
        ctx.unless_failed("the client sent no MCP request with a token")
        missed("the client obtained an access token and sent no MCP request with an Authorization header")
    for arrival in posts[first:]:
        header = arrival.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or token.strip() not in issued:
            missed(f"an MCP request after the grant carried Authorization {header!r}", path=arrival.path)
        if "access_token=" in arrival.path:
            missed("an MCP request after the grant carried the access token in its URL", path=arrival.path)
