"""Deal URIs: the RFC 6570 template's expansion and the one parser that decides what a URI names.

Only `https://uwmd.org/deals/<one segment>` is a deal; nothing a URI says can reach the file system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from conformance_reference.uwmd_codecs.model import DEFAULT_REPRESENTATION

__all__ = ["BASE_URI", "TEMPLATE", "Selection", "encode_deal_id", "parse_uri", "resource_uri"]

TEMPLATE: Final = "https://uwmd.org/deals/{deal_id}{?representation,view}"
BASE_URI: Final = "https://uwmd.org/deals/"


def encode_deal_id(deal_id: str) -> str:
    """RFC 6570 simple expansion of {deal_id}: everything but the unreserved set is percent-encoded."""
    from urllib.parse import quote

    return quote(deal_id, safe="")


def resource_uri(deal_id: str, representation: str | None = None, view: str | None = None) -> str:
    """The template's expansion: the canonical URI for uw-json, a query for any other selection."""
    uri = BASE_URI + encode_deal_id(deal_id)
    if view is not None:
        return f"{uri}?view={view}"
    if representation not in (None, DEFAULT_REPRESENTATION):
        return f"{uri}?representation={representation}"
    return uri


@dataclass(frozen=True)
class Selection:
    deal_id: str
    representation: str
    view: str | None


def parse_uri(uri: str) -> Selection | None:
    """The deal and selection a resource URI names, or None when it is not a deal URI of this server.

    Only `https://uwmd.org/deals/<one percent-encoded segment>` with an optional `representation` and
    `view` query is a deal: a `file:` URI, a bare path, a second path segment (`/../`) or a fragment is
    never looked up anywhere, so no URI can reach the file system.
    """
    from urllib.parse import unquote

    if not uri.startswith(BASE_URI) or "#" in uri or len(uri) > 2048:
        return None
    path, _, query = uri[len(BASE_URI) :].partition("?")
    if not path or "/" in path or "\\" in path:
        return None
    try:
        deal_id = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return None
    if not deal_id or len(deal_id) > 200 or "\x00" in deal_id:
        return None
    params: dict[str, str] = {}
    if query:
        for pair in query.split("&"):
            key, sep, value = pair.partition("=")
            if not sep or key not in ("representation", "view") or key in params:
                return None
            try:
                params[key] = unquote(value, errors="strict")
            except UnicodeDecodeError:
                return None
    return Selection(deal_id, params.get("representation", DEFAULT_REPRESENTATION), params.get("view"))
