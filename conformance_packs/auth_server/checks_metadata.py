"""ASRV-META-001 to -006: the authorization server's metadata, found where MCP's clients look, of the
right type, naming its issuer, with the members and the advertisements an MCP client needs."""

from __future__ import annotations

from conformance.pack_api import IssuerContext, issuer_check, missed, since

from .discovery import FOUND_CHECK, discover, endpoint, metadata


@issuer_check(FOUND_CHECK, "ASRV-META-001", "The metadata is served at a well-known URI")
async def found(ctx: IssuerContext) -> None:
    seen = await discover(ctx)
    if seen.first is None:
        only = ""
        if ctx.revision == "2025-06-18":
            only = " (2025-06-18 asks for RFC 8414's URI: its clients read no other)"
        missed(f"no well-known URI answered 200 with a JSON object{only}", tried=seen.tried)
    ctx.note(f"found at {', '.join(f.url for f in seen.found)}")


@issuer_check(
    "authorization-server.metadata.content-type", "ASRV-META-002", "The metadata is application/json"
)
async def content_type(ctx: IssuerContext) -> None:
    await metadata(ctx)
    for each in (await discover(ctx)).found:
        media = each.exchange.content_type.split(";")[0].strip().lower()
        if media != "application/json":
            missed(
                f"{each.url} answered Content-Type {each.exchange.content_type or '(none)'}",
                **each.exchange.excerpt(),
            )


@issuer_check("authorization-server.metadata.issuer", "ASRV-META-003", "The metadata's issuer is the issuer")
async def issuer(ctx: IssuerContext) -> None:
    await metadata(ctx)
    for each in (await discover(ctx)).found:
        said = each.document.get("issuer")
        if said != ctx.issuer:
            missed(f"{each.url} says issuer {said!r}, not {ctx.issuer!r}", **each.exchange.excerpt())


@issuer_check(
    "authorization-server.metadata.members", "ASRV-META-004", "The metadata has the members MCP needs"
)
async def members(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    wrong = [name for name in ("authorization_endpoint", "token_endpoint") if endpoint(first, name) is None]
    types = first.document.get("response_types_supported")
    if not isinstance(types, list) or "code" not in types:
        wrong.append(f"response_types_supported without code ({types!r})")
    if wrong:
        missed("missing or not a URL: " + ", ".join(wrong), **first.exchange.excerpt())


@issuer_check("authorization-server.metadata.pkce", "ASRV-META-005", "The metadata advertises PKCE with S256")
async def pkce(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    methods = first.document.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        missed(f"code_challenge_methods_supported is {methods!r}, without S256", **first.exchange.excerpt())


@issuer_check(
    "authorization-server.metadata.cimd",
    "ASRV-META-006",
    "The metadata advertises client ID metadata documents",
    revisions=since("2025-11-25"),
)
async def cimd(ctx: IssuerContext) -> None:
    first = await metadata(ctx)
    said = first.document.get("client_id_metadata_document_supported")
    if said is not True:
        shown = "absent" if said is None else repr(said)
        missed(f"client_id_metadata_document_supported is {shown}, not true", **first.exchange.excerpt())
