"""Finding an authorization server's metadata where MCP's clients look for it.

Why its own module: every row reads the metadata, and MCP fixes the order the well-known URIs are tried
in (path insertion for an issuer with a path); the case that judges whether it is found
(ASRV-META-001) owns the fetch, the others read what it found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from conformance.pack_api import IssuerContext, IssuerExchange, blocked

OAUTH = "/.well-known/oauth-authorization-server"
OPENID = "/.well-known/openid-configuration"
#: The check that owns the fetch (ASRV-META-001); the others are blocked by it when nothing is found.
FOUND_CHECK = "authorization-server.metadata.found"


@dataclass(frozen=True)
class Found:
    """A well-known URI that answered 200 with a JSON object."""

    url: str
    exchange: IssuerExchange
    document: dict[str, Any]


@dataclass
class Discovery:
    """Every URI tried, what each answered, and the documents found (MCP's order)."""

    tried: list[str] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)

    @property
    def first(self) -> Found | None:
        return self.found[0] if self.found else None


def locations(issuer: str, revision: str) -> list[str]:
    """The well-known URIs of `issuer` in the order MCP's clients try them: for an issuer with a path,
    RFC 8414's and OpenID's inserted before the path, then OpenID's appended; without, RFC 8414's then
    OpenID's. 2025-06-18 asks for RFC 8414's only."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if path:
        found = [origin + OAUTH + path, origin + OPENID + path, origin + path + OPENID]
    else:
        found = [origin + OAUTH, origin + OPENID]
    return [url for url in found if OPENID not in url] if revision == "2025-06-18" else found


async def discover(ctx: IssuerContext) -> Discovery:
    """The revision's discovery, fetched once (by ASRV-META-001's case)."""

    async def fetch() -> Discovery:
        out = Discovery()
        for url in locations(ctx.issuer, ctx.revision):
            exchange = await ctx.http("GET", url, headers={"Accept": "application/json"})
            document = exchange.json()
            out.tried.append(f"{url}: HTTP {exchange.status}")
            if exchange.status == 200 and isinstance(document, dict):
                out.found.append(Found(url, exchange, document))
        return out

    return await ctx.remember_once("metadata", FOUND_CHECK, fetch)


async def metadata(ctx: IssuerContext) -> Found:
    """The first metadata document found, or SKIP blocked by ASRV-META-001."""
    found = (await discover(ctx)).first
    if found is None:
        blocked(FOUND_CHECK, "no authorization server metadata was found")
    return found


def endpoint(found: Found, name: str) -> str | None:
    """An endpoint's URL from the metadata, when it is an http(s) URL."""
    value = found.document.get(name)
    ok = isinstance(value, str) and urlsplit(value).scheme in ("http", "https") and urlsplit(value).netloc
    return value if ok else None
