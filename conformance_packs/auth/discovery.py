"""What an MCP client finds before it authenticates: the 401 challenge, the protected-resource metadata
(RFC 9728) and each authorization server's metadata (RFC 8414 or OpenID discovery).

Kept apart from the checks because the suite's `prepare` hook needs the same discovery to learn which
issuer the target trusts, and one copy of each rule (well-known URIs, identifier comparison) is enough.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:  # httpx loads when a run needs it: `list` and `explain` import this module too
    import httpx

PRM_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
AS_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN: Final = "/.well-known/openid-configuration"
#: A metadata document larger than this is not read whole (a hostile server's answer stays bounded).
MAX_DOCUMENT_BYTES: Final = 256 * 1024

_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


@dataclass
class Fetched:
    """One GET of a metadata document: where, what came back, and why it cannot be used ('' if it can)."""

    url: str
    status: int | None = None
    document: dict[str, Any] | None = None
    problem: str = ""
    excerpt: str = ""

    def evidence(self) -> dict[str, Any]:
        return {"url": self.url, "http_status": self.status, "body": self.excerpt}


@dataclass
class Challenge:
    """A `WWW-Authenticate` header read as RFC 6750 section 3 writes it: the scheme and its parameters."""

    raw: str
    scheme: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_challenge(header: str | None) -> Challenge | None:
    """The Bearer challenge of a `WWW-Authenticate` value (the first one when several are listed)."""
    if not header:
        return None
    text = header.strip()
    scheme, _, rest = text.partition(" ")
    challenge = Challenge(raw=header, scheme=scheme)
    at = 0
    while at < len(rest):
        match = _PARAM.match(rest, at)
        if match is None or match.end() == at:
            break
        value = match.group(2) if match.group(2) is not None else match.group(3)
        challenge.params.setdefault(match.group(1).lower(), re.sub(r"\\(.)", r"\1", value or ""))
        at = match.end()
    return challenge


def same_identifier(a: str, b: str) -> bool:
    """Identical, or differing only in an empty path against "/" (RFC 3986 section 6.2.3 makes those one
    URI for http and https; pydantic, in the Python SDK, writes a path-less URL with the slash)."""
    if a == b:
        return True
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme, pa.netloc, pa.query, pa.fragment) == (
        pb.scheme,
        pb.netloc,
        pb.query,
        pb.fragment,
    ) and {
        pa.path,
        pb.path,
    } <= {"", "/"}


def prm_locations(resource: str) -> list[tuple[str, str]]:
    """The RFC 9728 well-known URIs of `resource`, in MCP's order: at the endpoint's path, then the root.
    Each with the resource identifier it stands for (what the document's `resource` must be)."""
    parts = urlsplit(resource)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    found = []
    if path:
        found.append((origin + PRM_WELL_KNOWN + path, resource))
    found.append((origin + PRM_WELL_KNOWN, origin))
    return found


def identifier_of(metadata_url: str) -> str | None:
    """The resource identifier a well-known metadata URL was built from (RFC 9728 section 3.1), or None
    for a URL that is not of that form (a `resource_metadata` that names some other place)."""
    parts = urlsplit(metadata_url)
    if not parts.path.startswith(PRM_WELL_KNOWN):
        return None
    rest = parts.path[len(PRM_WELL_KNOWN) :]
    if rest and not rest.startswith("/"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, rest, parts.query, ""))


def as_locations(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the order MCP clients try (2025-11-25 on):
    RFC 8414 and OpenID discovery, with the path inserted or (OpenID only) appended."""
    parts = urlsplit(issuer)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    if path:
        return [
            origin + AS_WELL_KNOWN + path,
            origin + OIDC_WELL_KNOWN + path,
            origin + path + OIDC_WELL_KNOWN,
        ]
    return [origin + AS_WELL_KNOWN, origin + OIDC_WELL_KNOWN]


def client(timeout: float) -> httpx.AsyncClient:
    """A client for metadata GETs: no proxies from the environment, no redirects followed silently."""
    import httpx

    return httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False)


async def fetch_json(http: httpx.AsyncClient, url: str) -> Fetched:
    """GET `url` and read a JSON object from it, bounded; never raises for what the server does."""
    import httpx

    fetched = Fetched(url)
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json"}) as resp:
            fetched.status = resp.status_code
            body = bytearray()
            async for chunk in resp.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    fetched.problem = f"the document is larger than {MAX_DOCUMENT_BYTES} bytes"
                    return fetched
    except httpx.HTTPError as exc:
        fetched.problem = f"GET {url} failed: {type(exc).__name__}: {exc}"
        return fetched
    text = body.decode("utf-8", errors="replace")
    fetched.excerpt = text[:1500]
    if fetched.status != 200:
        fetched.problem = f"GET {url} answered HTTP {fetched.status}"
        return fetched
    try:
        document = json.loads(text)
    except ValueError:
        fetched.problem = f"GET {url} answered no JSON"
        return fetched
    if not isinstance(document, dict):
        fetched.problem = f"GET {url} answered JSON that is not an object"
        return fetched
    fetched.document = document
    return fetched


async def first_found(http: httpx.AsyncClient, urls: list[str]) -> tuple[Fetched | None, list[Fetched]]:
    """The first of `urls` that yields a JSON object, and every attempt made (for the evidence)."""
    tried = []
    for url in urls:
        fetched = await fetch_json(http, url)
        tried.append(fetched)
        if fetched.document is not None:
            return fetched, tried
    return None, tried


async def authorization_server_metadata(
    http: httpx.AsyncClient, issuer: str, *, rfc8414_only: bool = False
) -> tuple[Fetched | None, list[Fetched]]:
    """The issuer's metadata, at RFC 8414's URI only where the revision asks for that one (2025-06-18)."""
    urls = as_locations(issuer)
    if rfc8414_only:
        urls = [u for u in urls if AS_WELL_KNOWN in u]
    return await first_found(http, urls)
