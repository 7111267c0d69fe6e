"""The authorization checks: what a protected MCP server answers without a token, with each kind of bad
token, with a good one and with one of too small a scope, and what its metadata says.

Every request goes to the target's MCP endpoint with the session's own headers and only the
`Authorization` header changed (`ping` in the legacy era, `server/discover` in 2026-07-28): what differs
between a PASS and a FAIL is the token and nothing else.
"""

from __future__ import annotations

from typing import Any, NoReturn, cast

from conformance.pack_api import Call, CaseContext, blocked, check, missed, skip
from conformance_packs.auth import discovery

LATER_DISCOVERY = ("2025-11-25", "2026-07-28")
#: The rows other rows rest on: a SKIP because one of them FAILed names its case (`checks.blocked`).
NO_TOKEN = "auth.challenge.no-token"
PRM_FOUND = "auth.discovery.found"
PRM_HEADER = "auth.discovery.header"
PRM_SERVERS = "auth.metadata.authorization-servers"
AS_FOUND = "auth.metadata.server-discovery"
SCOPE_403 = "auth.scope.forbidden"
#: At most this many authorization servers of one metadata document are looked up.
MAX_SERVERS = 3


def _tokens(ctx: CaseContext) -> dict[str, str]:
    return cast(dict[str, str], (ctx.target.settings.get("auth") or {}).get("tokens") or {})


async def _attempt(ctx: CaseContext, authorization: str | None) -> Call:
    """The probe request with this `Authorization` header (None: without one)."""
    method = "ping" if ctx.era == "legacy" else "server/discover"
    headers = cast(dict[str, str], {"Authorization": authorization})
    return await ctx.request(method, headers=headers)


async def _without_token(ctx: CaseContext) -> Call:
    return await ctx.remember_once("auth:no-token", "a request without a token", lambda: _attempt(ctx, None))


async def _token_needed(ctx: CaseContext) -> None:
    """SKIP blocked by AUTH-401-001 when a request without any token was served: a server that asks no
    token has broken that one rule, and a row that judges what it refuses (a bad token, too small a
    scope, a token in the query) has nothing to judge. Reuses AUTH-401-001's request: nothing is sent."""
    call = await _without_token(ctx)
    status = call.reply.status or 0
    if 200 <= status < 300:
        blocked(
            "auth.challenge.no-token",
            f"a request without any token was served (HTTP {status}): the server asks no token here, so"
            " there is no refusal of a token to judge",
        )


def _refused_without_token(call: Call) -> None:
    """SKIP, blocked by AUTH-401-001, when the request without a token was not answered 401: that row
    FAILs on it, and a 401's challenge cannot be judged on an answer that is none."""
    if call.reply.status != 401:
        blocked(NO_TOKEN, f"the request without a token was answered HTTP {call.reply.status}, not 401")


def _challenge(call: Call) -> discovery.Challenge | None:
    return discovery.parse_challenge(call.reply.headers.get("www-authenticate"))


def _evidence(call: Call) -> dict[str, Any]:
    return {**call.excerpt(), "www_authenticate": call.reply.headers.get("www-authenticate")}


def _expect_refused(call: Call, what: str) -> None:
    """Invalid or expired tokens MUST receive a HTTP 401 response."""
    status = call.reply.status
    if status == 401:
        return
    if status is not None and 200 <= status < 300:
        missed(f"{what} was accepted (HTTP {status})", **_evidence(call))
    missed(f"{what} was answered HTTP {status}, not 401", **_evidence(call))


async def _bad_token(ctx: CaseContext, kind: str, what: str) -> None:
    token = _tokens(ctx).get(kind)
    if token is None:
        skip(f"no {kind} token: a real token from the environment cannot be re-signed (use [auth] key_file)")
    await _token_needed(ctx)
    _expect_refused(await _attempt(ctx, "Bearer " + token), what)
    ctx.note(f"{what}: refused with HTTP 401")


@check(
    "auth.transport.stdio",
    "AUTH-TRANSPORT-001",
    "stdio servers take credentials from the environment",
    transports=("stdio",),
)
async def stdio_not_judged(ctx: CaseContext) -> None:
    skip("not judged: MCP's authorization is for HTTP transports; a stdio server takes its credentials"
         " from the environment")  # fmt: skip


@check(NO_TOKEN, "AUTH-401-001", "a request without a token is 401", transports=("http",))
async def no_token(ctx: CaseContext) -> None:
    call = await _without_token(ctx)
    if call.reply.status != 401:
        missed(f"a request without a token was answered HTTP {call.reply.status}, not 401", **_evidence(call))


@check(
    "auth.challenge.bearer",
    "AUTH-401-002",
    "a 401 carries a Bearer WWW-Authenticate challenge",
    transports=("http",),
)
async def bearer_challenge(ctx: CaseContext) -> None:
    call = await _without_token(ctx)
    _refused_without_token(call)
    challenge = _challenge(call)
    if challenge is None:
        missed("the 401 has no WWW-Authenticate header", **_evidence(call))
    if challenge.scheme.lower() != "bearer":
        missed(f"the 401's WWW-Authenticate scheme is {challenge.scheme!r}, not Bearer", **_evidence(call))
    if "scope" not in challenge.params:
        ctx.note("the challenge names no scope (a SHOULD from 2025-11-25 on, not judged here)")


@check(
    PRM_HEADER,
    "AUTH-PRM-001",
    "a 401 names the resource metadata in WWW-Authenticate",
    transports=("http",),
    revisions=("2025-06-18",),
)
async def discovery_header(ctx: CaseContext) -> None:
    call = await _without_token(ctx)
    _refused_without_token(call)
    challenge = _challenge(call)
    if challenge is None or not challenge.params.get("resource_metadata"):
        missed("the 401's WWW-Authenticate names no resource_metadata URL", **_evidence(call))
    ctx.note(f"resource_metadata: {challenge.params['resource_metadata']}")


async def _protected_resource_metadata(ctx: CaseContext) -> tuple[discovery.Fetched | None, str, list[Any]]:
    """The metadata a client finds: at the challenge's `resource_metadata`, else at the well-known URIs.
    Returns the document fetched, the resource identifier it must name, and every attempt."""

    async def find() -> tuple[discovery.Fetched | None, str, list[Any]]:
        call = await _without_token(ctx)
        challenge = _challenge(call)
        named = challenge.params.get("resource_metadata") if challenge else None
        tried: list[Any] = []
        async with discovery.client(ctx.options.timeout) as http:
            if named:
                fetched = await discovery.fetch_json(http, named)
                tried.append(fetched)
                if fetched.document is not None:
                    return fetched, discovery.identifier_of(named) or ctx.target.url, tried
            for url, identifier in discovery.prm_locations(ctx.target.url):
                fetched = await discovery.fetch_json(http, url)
                tried.append(fetched)
                if fetched.document is not None:
                    return fetched, identifier, tried
        return None, "", tried

    return await ctx.remember_once("auth:prm", "the protected resource metadata", find)


@check(
    PRM_FOUND,
    "AUTH-PRM-002",
    "protected resource metadata is found by a discovery mechanism",
    transports=("http",),
    revisions=LATER_DISCOVERY,
)
async def discovery_found(ctx: CaseContext) -> None:
    found, _, tried = await _protected_resource_metadata(ctx)
    if found is None:
        missed(
            "no protected resource metadata: neither the challenge's resource_metadata nor the well-known"
            " URIs gave a JSON document",
            attempts=[t.evidence() for t in tried],
        )
    ctx.note(f"found at {found.url}")


async def _no_metadata(ctx: CaseContext) -> NoReturn:
    """SKIP for want of protected resource metadata, blocked by the row that FAILs on it: AUTH-PRM-002
    where the revision has it, else AUTH-401-001 or AUTH-PRM-001 when no 401 or no challenge named the
    document; a plain SKIP when no row of the revision FAILs for it."""
    reason = "no protected resource metadata was found (judged by the discovery rows)"
    if ctx.revision in LATER_DISCOVERY:
        blocked(PRM_FOUND, reason)
    call = await _without_token(ctx)
    _refused_without_token(call)  # 2025-06-18 names the document in a 401's challenge only
    challenge = _challenge(call)
    if not (challenge and challenge.params.get("resource_metadata")):
        blocked(PRM_HEADER, reason)
    skip(reason)


async def _listed_servers(ctx: CaseContext) -> list[Any]:
    """The authorization servers the resource metadata lists; SKIP, blocked by the row that FAILs, when
    there is no metadata or it lists none."""
    found, _, _ = await _protected_resource_metadata(ctx)
    if found is None or found.document is None:
        await _no_metadata(ctx)
    servers = found.document.get("authorization_servers")
    if not isinstance(servers, list) or not [s for s in servers if isinstance(s, str)]:
        blocked(PRM_SERVERS, "the resource metadata lists no authorization server (judged by AUTH-PRM-003)")
    return servers


@check(
    PRM_SERVERS,
    "AUTH-PRM-003",
    "the resource metadata lists at least one authorization server",
    transports=("http",),
)
async def authorization_servers(ctx: CaseContext) -> None:
    found, _, _ = await _protected_resource_metadata(ctx)
    if found is None or found.document is None:
        await _no_metadata(ctx)
    servers = found.document.get("authorization_servers")
    if not isinstance(servers, list) or not servers:
        missed("authorization_servers is missing or empty", **found.evidence())
    bad = [s for s in servers if not isinstance(s, str) or not s.startswith(("https://", "http://"))]
    if bad:
        missed(f"authorization_servers has entries that are no URL: {bad[:3]!r}", **found.evidence())


@check(
    "auth.metadata.resource",
    "AUTH-PRM-004",
    "the metadata's resource is the protected resource's identifier",
    transports=("http",),
)
async def metadata_resource(ctx: CaseContext) -> None:
    found, identifier, _ = await _protected_resource_metadata(ctx)
    if found is None or found.document is None:
        await _no_metadata(ctx)
    resource = found.document.get("resource")
    if not isinstance(resource, str):
        missed("the metadata has no resource", **found.evidence())
    if not discovery.same_identifier(resource, identifier):
        missed(
            f"resource is {resource!r}, but the metadata at {found.url} stands for {identifier!r}",
            **found.evidence(),
        )
    if resource != identifier:
        ctx.note(f"resource {resource!r} and {identifier!r} differ only in an empty path written as '/'")


async def _server_metadata(ctx: CaseContext) -> list[tuple[str, discovery.Fetched | None, list[Any]]]:
    async def fetch() -> list[tuple[str, discovery.Fetched | None, list[Any]]]:
        found, _, _ = await _protected_resource_metadata(ctx)
        servers = (found.document or {}).get("authorization_servers") if found else None
        if not isinstance(servers, list):
            return []
        out = []
        async with discovery.client(ctx.options.timeout) as http:
            for issuer in [s for s in servers if isinstance(s, str)][:MAX_SERVERS]:
                # 2025-06-18: "Authorization servers MUST provide OAuth 2.0 Authorization Server Metadata".
                meta, tried = await discovery.authorization_server_metadata(
                    http, issuer, rfc8414_only=ctx.revision == "2025-06-18"
                )
                out.append((issuer, meta, tried))
        return out

    return await ctx.remember_once("auth:as-metadata", "the authorization servers' metadata", fetch)


@check(
    AS_FOUND,
    "AUTH-AS-001",
    "each authorization server's metadata is found and names its issuer",
    transports=("http",),
)
async def server_discovery(ctx: CaseContext) -> None:
    await _listed_servers(ctx)
    servers = await _server_metadata(ctx)
    for issuer, meta, tried in servers:
        if meta is None or meta.document is None:
            missed(
                f"no RFC 8414 or OpenID metadata for {issuer!r} at any well-known URI",
                attempts=[t.evidence() for t in tried],
            )
        named = meta.document.get("issuer")
        if not isinstance(named, str) or not discovery.same_identifier(named, issuer):
            missed(f"the metadata at {meta.url} names issuer {named!r}, not {issuer!r}", **meta.evidence())
        ctx.note(f"{issuer}: metadata at {meta.url}")


@check(
    "auth.metadata.pkce",
    "AUTH-AS-002",
    "authorization server metadata advertises PKCE with S256",
    transports=("http",),
    revisions=LATER_DISCOVERY,
)
async def pkce(ctx: CaseContext) -> None:
    await _listed_servers(ctx)
    servers = [(issuer, meta) for issuer, meta, _ in await _server_metadata(ctx) if meta and meta.document]
    if not servers:
        blocked(AS_FOUND, "no authorization server metadata was found (judged by AUTH-AS-001)")
    for issuer, meta in servers:
        assert meta.document is not None
        methods = meta.document.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            missed(
                f"{issuer}: code_challenge_methods_supported is {methods!r}; MCP clients refuse to proceed"
                " without S256",
                **meta.evidence(),
            )


@check("auth.token.valid", "AUTH-TOKEN-006", "a valid token is accepted", transports=("http",))
async def valid_token(ctx: CaseContext) -> None:
    token = _tokens(ctx).get("valid")
    if token is None:
        skip("no valid token (the [auth] table gives none)")
    call = await _attempt(ctx, "Bearer " + token)
    status = call.reply.status or 0
    if not 200 <= status < 300:
        missed(f"a valid token was answered HTTP {status}", **_evidence(call))


@check("auth.token.malformed", "AUTH-TOKEN-001", "a malformed token is 401", transports=("http",))
async def malformed_token(ctx: CaseContext) -> None:
    await _bad_token(ctx, "malformed", "a token that is no JWT")


@check("auth.token.expired", "AUTH-TOKEN-002", "an expired token is 401", transports=("http",))
async def expired_token(ctx: CaseContext) -> None:
    await _bad_token(ctx, "expired", "a token that expired an hour ago")


@check(
    "auth.token.audience",
    "AUTH-TOKEN-003",
    "a token issued for another resource is 401",
    transports=("http",),
)
async def audience_token(ctx: CaseContext) -> None:
    await _bad_token(ctx, "wrong-audience", "a token whose audience is another resource")


@check("auth.token.issuer", "AUTH-TOKEN-004", "a token from an untrusted issuer is 401", transports=("http",))
async def issuer_token(ctx: CaseContext) -> None:
    await _bad_token(ctx, "wrong-issuer", "a token from an issuer the server does not trust")


@check(
    "auth.token.signature",
    "AUTH-TOKEN-005",
    "a token signed with an unknown key is 401",
    transports=("http",),
)
async def signature_token(ctx: CaseContext) -> None:
    await _bad_token(ctx, "unknown-key", "a token signed with a key the issuer never published")


async def _small_scope(ctx: CaseContext) -> Call:
    """The probe request with a valid token that carries no scope (once per revision)."""
    token = _tokens(ctx).get("small-scope")
    if token is None:
        skip("no token of too small a scope (give [auth] small_scope_token_env, or key_file)")
    await _token_needed(ctx)
    return await ctx.remember_once(
        "auth:small-scope", "a request with too small a scope", lambda: _attempt(ctx, "Bearer " + token)
    )


async def _announced_scopes(ctx: CaseContext) -> dict[str, list[str]]:
    """The scopes the server says its requests need, by where it says so: the `scope` of its 401
    challenge, the `scopes_supported` of its protected resource metadata, and the target file's
    `[auth] scope` (the scope its valid token is minted with). The challenge is AUTH-401-001's answer
    and the metadata is fetched once per revision, shared with the discovery rows."""
    found: dict[str, list[str]] = {}
    challenge = _challenge(await _without_token(ctx))
    named = challenge.params.get("scope") if challenge else None
    if isinstance(named, str) and named.split():
        found["its 401 challenge"] = named.split()
    metadata, _, _ = await _protected_resource_metadata(ctx)
    supported = (metadata.document or {}).get("scopes_supported") if metadata else None
    if isinstance(supported, list) and any(isinstance(v, str) and v for v in supported):
        found["scopes_supported of its resource metadata"] = [
            v for v in supported if isinstance(v, str) and v
        ]
    table = ctx.target.settings.get("auth") or {}
    configured = table.get("scope") if table.get("scope_from", "target file") == "target file" else None
    if isinstance(configured, str) and configured.split():
        found["the target file's [auth] scope"] = configured.split()
    return found


def _scopes_text(announced: dict[str, list[str]]) -> str:
    scopes = list(dict.fromkeys(s for listed in announced.values() for s in listed))
    return f"{' '.join(scopes)} (named in {', '.join(announced)})"


@check(
    SCOPE_403,
    "AUTH-SCOPE-001",
    "a token of too small a scope is 403",
    transports=("http",),
)
async def scope_forbidden(ctx: CaseContext) -> None:
    call = await _small_scope(ctx)
    status = call.reply.status or 0
    if 200 <= status < 300:
        announced = await _announced_scopes(ctx)
        if announced:
            # The server says its requests need a scope: serving a token without any is no 403.
            missed(
                f"a valid token without any scope was served (HTTP {status}), though the server announces"
                f" the scope {_scopes_text(announced)}: a token without the scope a request needs must be"
                " answered 403",
                **_evidence(call),
            )
        skip(
            f"a valid token without any scope was served (HTTP {status}) and the server announces no scope"
            " (none in its 401 challenge, its resource metadata or the target file): this request needs"
            " none here"
        )
    if status != 403:
        missed(f"a token without the scope the request needs was answered HTTP {status}, not 403",
               **_evidence(call))  # fmt: skip


@check(
    "auth.scope.challenge",
    "AUTH-SCOPE-002",
    "an insufficient-scope 403 says insufficient_scope",
    transports=("http",),
    revisions=LATER_DISCOVERY,
)
async def scope_challenge(ctx: CaseContext) -> None:
    call = await _small_scope(ctx)
    status = call.reply.status or 0
    if 200 <= status < 300:
        if await _announced_scopes(ctx):
            blocked(SCOPE_403, f"the token without any scope was served (HTTP {status}): no 403")
        skip(f"a valid token without any scope was served (HTTP {status}): this request needs no scope here")
    if status != 403:
        blocked(SCOPE_403, f"the answer was HTTP {status}, not 403 (judged by AUTH-SCOPE-001)")
    challenge = _challenge(call)
    if challenge is None or challenge.scheme.lower() != "bearer":
        ctx.facts.update(_evidence(call))
        ctx.miss_should("the 403 has no Bearer WWW-Authenticate challenge")
        return
    error = challenge.params.get("error")
    if error != "insufficient_scope":
        said = f'error="{error}"' if error else "no error parameter"
        ctx.facts.update(_evidence(call))
        ctx.miss_should(f'the 403\'s challenge says {said}, not error="insufficient_scope"')
    if "scope" not in challenge.params:
        ctx.note("the 403's challenge names no scope (a SHOULD, not judged here)")


@check(
    "auth.token.query",
    "AUTH-QUERY-001",
    "a token in the query string is not accepted",
    transports=("http",),
)
async def query_token(ctx: CaseContext) -> None:
    token = _tokens(ctx).get("valid")
    if token is None:
        skip("no valid token (the [auth] table gives none)")
    await _token_needed(ctx)  # a server that asks no token accepts one anywhere: not this row's finding
    session = await ctx.session()
    adapter = await ctx.http_adapter()
    if adapter is None:
        skip("this check needs the Streamable HTTP adapter")
    method = "ping" if ctx.era == "legacy" else "server/discover"
    params = {"_meta": session.meta()} if ctx.era == "modern" else None
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    headers.update(session.headers_for(method, params))
    if adapter.session_id:
        headers["Mcp-Session-Id"] = adapter.session_id
    if adapter.protocol_header:
        headers["MCP-Protocol-Version"] = adapter.protocol_header
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "auth-query-token", "method": method}
    if params is not None:
        body["params"] = params
    separator = "&" if "?" in ctx.target.url else "?"
    async with discovery.client(ctx.options.timeout) as http:
        resp = await http.post(f"{ctx.target.url}{separator}access_token={token}", json=body, headers=headers)
    evidence = {"http_status": resp.status_code, "www_authenticate": resp.headers.get("www-authenticate"),
                "body": resp.text[:1500]}  # fmt: skip
    if 200 <= resp.status_code < 300:
        ctx.miss_should(f"a token in the access_token query parameter was accepted (HTTP {resp.status_code})")
        ctx.facts.update(evidence)
        return
    ctx.note(f"a token in the query string was answered HTTP {resp.status_code}")
