"""The reference client's DPoP key and the proofs it signs (RFC 9449 section 4.2, the MCP DPoP
extension SEP-1932): one EC P-256 key per run, a fresh ES256 proof per request with a random `jti`,
the request's method and URI (no query, no fragment), `iat` now, and, as asked, `ath` (the hash of the
access token it goes with) and the server's `nonce`. The OAuth flow (client_auth.py) decides when.

Written apart from the client pack's proof reader on purpose: the judge and the judged share no code.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from urllib.parse import urlsplit


class DpopKey:
    """The client's proof-of-possession key, and each proof a step of its step methods signs."""

    def __init__(self) -> None:
        from joserfc.jwk import ECKey

        self.key = ECKey.generate_key("P-256", private=True)
        self.public = self.key.as_dict(private=False)

    def jti(self) -> str:
        """At least 96 bits of randomness (RFC 9449 section 4.2)."""
        return secrets.token_urlsafe(16)

    def proof(self, method: str, url: str, *, token: str | None = None, nonce: str | None = None) -> str:
        from joserfc import jwt

        parts = urlsplit(url)
        claims: dict[str, object] = {
            "jti": self.jti(),
            "htm": method,
            "htu": f"{parts.scheme}://{parts.netloc}{parts.path}",
            "iat": int(time.time()),
        }
        if token is not None:
            digest = hashlib.sha256(token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.public}, claims, self.key)
