"""A DPoP proof (RFC 9449 section 4) read from the raw `DPoP` header of one request, and every rule of
section 4.2 a client must follow for it checked: one header, a JWS in compact form, `typ` dpop+jwt, an
asymmetric `alg`, a public `jwk` (no private part) that verifies the signature, `jti`, `htm` (the
request's method), `htu` (the request's URI without query or fragment), `iat` near the time it arrived,
and, when asked, `ath` (the hash of the access token sent with it).

Shared by the DPoP scenario's token endpoint and resource (which answer by it, as the official
scenario's servers do) and by the checks (which judge by it): one reading of the bytes, so the answer
the client got and the verdict cannot disagree. It is written from RFC 9449, not from the official
suite's validator.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

#: The asymmetric JWS algorithms a proof may use (RFC 9449 section 4.2: never `none`, never a MAC).
ASYMMETRIC = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
#: How far `iat` may be from the instant the proof arrived, in seconds (the official window; SEP-1932's
#: "+/- 5 minutes").
WINDOW = 300


class ProofError(ValueError):
    """The proof breaks a rule of RFC 9449 section 4.2 (the message says which)."""


@dataclass(frozen=True)
class Proof:
    """A proof that passed: its JOSE header, its claims and its key's RFC 7638 SHA-256 thumbprint."""

    header: dict[str, Any]
    claims: dict[str, Any]
    jkt: str

    @property
    def jti(self) -> str:
        return str(self.claims["jti"])

    @property
    def nonce(self) -> Any:
        return self.claims.get("nonce")


def header_values(raw_headers: tuple[tuple[str, str], ...]) -> list[str]:
    """Every `DPoP` header the request carried, as sent."""
    return [value for name, value in raw_headers if name.lower() == "dpop"]


def token_hash(token: str) -> str:
    """`ath`: base64url (no padding) of the SHA-256 of the token's ASCII bytes (RFC 9449 section 4.2)."""
    digest = hashlib.sha256(token.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _segment(part: str) -> dict[str, Any]:
    try:
        value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError as exc:
        raise ProofError(f"the proof is no well-formed JWT ({exc})") from None
    if not isinstance(value, dict):
        raise ProofError("the proof is no well-formed JWT (a segment is not a JSON object)")
    return value


def _verified(value: str, header: dict[str, Any]) -> str:
    """Verify the signature with the header's own `jwk`; its thumbprint."""
    from joserfc import jws
    from joserfc.errors import JoseError
    from joserfc.jwk import JWKRegistry

    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        raise ProofError("the proof's header has no jwk")
    if "d" in jwk or "k" in jwk:
        raise ProofError("the proof's jwk contains a private key")
    try:
        key = JWKRegistry.import_key(jwk)
        jws.deserialize_compact(value, key, algorithms=[str(header["alg"])])
        return str(key.thumbprint())
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise ProofError(f"the proof's signature does not verify with its jwk ({exc})") from None


def _base_uri(url: str) -> str:
    """The URI as compared (RFC 3986 scheme-based normalization: case of scheme and host, one trailing
    slash ignored)."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def _claims_fit(claims: dict[str, Any], method: str, url: str, arrived: float) -> None:
    if not isinstance(claims.get("jti"), str) or not claims["jti"]:
        raise ProofError("the proof has no jti")
    if claims.get("htm") != method:
        raise ProofError(f"the proof's htm {claims.get('htm')!r} is not the request's method {method}")
    htu = claims.get("htu")
    if not isinstance(htu, str) or "?" in htu or "#" in htu or _base_uri(htu) != _base_uri(url):
        raise ProofError(f"the proof's htu {htu!r} is not the request's URI {url} (without query)")
    iat = claims.get("iat")
    if not isinstance(iat, (int, float)) or isinstance(iat, bool) or abs(iat - arrived) > WINDOW:
        raise ProofError(f"the proof's iat {iat!r} is not within {WINDOW} s of its arrival ({arrived:.0f})")


def read_proof(values: list[str], method: str, url: str, arrived: float, token: str | None = None) -> Proof:
    """The one proof of a request to `url` by `method` that arrived at epoch `arrived`, checked by RFC
    9449 section 4.2 (and `ath` against `token` when one was presented); a ProofError says what broke."""
    if not values:
        raise ProofError("the request carries no DPoP header")
    if len(values) > 1 or "," in values[0]:
        raise ProofError("the request carries more than one DPoP proof")
    value = values[0].strip()
    parts = value.split(".")
    if len(parts) != 3:
        raise ProofError("the proof is no JWS in compact serialization")
    header, claims = _segment(parts[0]), _segment(parts[1])
    if header.get("typ") != "dpop+jwt":
        raise ProofError(f"the proof's typ is {header.get('typ')!r}, not dpop+jwt")
    if header.get("alg") not in ASYMMETRIC:
        raise ProofError(f"the proof's alg {header.get('alg')!r} is no asymmetric signature algorithm")
    jkt = _verified(value, header)
    _claims_fit(claims, method, url, arrived)
    if token is not None and claims.get("ath") != token_hash(token):
        raise ProofError(f"the proof's ath {claims.get('ath')!r} is not the hash of the access token sent")
    return Proof(header, claims, jkt)
