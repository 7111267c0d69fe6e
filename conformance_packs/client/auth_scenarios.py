"""The official OAuth client scenarios (`auth/...`), played on the scenario server's one loopback
listener: the MCP endpoint `/mcp` answers a request without a good bearer token with a 401 challenge
(a 403 `insufficient_scope` for step-up), beside it the protected resource metadata and one or more
authorization servers under their issuer paths (`auth_server.py`). Every request is recorded raw; the
checks (`auth_checks.py`) judge what the client sent. What a check compares with (the issuer, the
resource the metadata names, where the metadata lives) is in `recording.facts["auth"]`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from conformance.pack_api import Arrival, HttpAnswer, Message, Peer, Scenario, scenario
from conformance_packs.client.auth_server import (
    ATTACKER_ISSUER,
    WELL_KNOWN_AS,
    WELL_KNOWN_OIDC,
    WELL_KNOWN_PRM,
    Answer,
    AuthServer,
    Grants,
    form,
)

STATEFUL, STATELESS, MARCH = "2025-11-25", "2026-07-28", "2025-03-26"
PATH_PRM = WELL_KNOWN_PRM + "/mcp"
TEST_TOOL = {
    "name": "test-tool",
    "description": "A tool behind authorization",
    "inputSchema": {"type": "object"},
}


class AuthScenario(Scenario):
    """An MCP server that is an OAuth protected resource, with its authorization servers."""

    revisions: ClassVar[tuple[str, ...]] = (STATEFUL, STATELESS)
    transports: ClassVar[tuple[str, ...]] = ("http",)
    tools = (TEST_TOOL,)
    servers: ClassVar[tuple[AuthServer, ...]] = (AuthServer(),)
    #: Where the protected resource metadata is served (None: none, 2025-03-26), whether the challenge
    #: names it, its `scopes_supported`, the scope the 401 challenge names, and a `resource` override.
    prm_path: ClassVar[str | None] = PATH_PRM
    prm_in_header: ClassVar[bool] = True
    prm_scopes: ClassVar[tuple[str, ...] | None] = None
    challenge_scope: ClassVar[str | None] = None
    prm_resource: ClassVar[str | None] = None
    #: Where a request is a mistake the scenario notes (a root PRM when the path-based one exists).
    traps: ClassVar[tuple[str, ...]] = ()
    #: JSON-RPC methods the MCP endpoint serves without a token (step-up scenarios let initialize in).
    open_methods: ClassVar[tuple[str, ...]] = ()
    #: The authentication scheme of the challenge (DPoP scenarios: `DPoP`, RFC 9449 section 7.1).
    scheme: ClassVar[str] = "Bearer"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.base = ""
        self.grants = Grants()

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        if name != TEST_TOOL["name"]:
            return await super().call_tool(name, arguments, message, peer)
        return {"content": [{"type": "text", "text": "test"}]}

    # -- what the client meets ------------------------------------------------------------------------

    def mcp_url(self) -> str:
        return self.base + "/mcp"

    def resource(self) -> str:
        return self.prm_resource or self.mcp_url()

    def active_servers(self) -> tuple[int, ...]:
        """The indexes of the authorization servers the protected resource metadata names now."""
        return (0,)

    def prm_document(self) -> dict[str, Any]:
        issuers = [self.servers[i].issuer(self.base) for i in self.active_servers()]
        document: dict[str, Any] = {"resource": self.resource(), "authorization_servers": issuers}
        if self.prm_scopes is not None:
            document["scopes_supported"] = list(self.prm_scopes)
        return document

    def challenge(self, status: int = 401, scope: str | None = None, error: str | None = None) -> Answer:
        """The WWW-Authenticate challenge of a request without a token good enough."""
        params = []
        if error:
            params.append(f'error="{error}"')
        scope = scope or self.challenge_scope
        if scope:
            params.append(f'scope="{scope}"')
        if self.prm_in_header and self.prm_path:
            params.append(f'resource_metadata="{self.base}{self.prm_path}"')
        header = f"{self.scheme} " + ", ".join(params) if params else self.scheme
        body = {"error": error or "invalid_token", "error_description": "authorization required"}
        return Answer(status, body, {"WWW-Authenticate": header})

    def token_of(self, request: Arrival) -> tuple[int, tuple[str, ...]] | None:
        header = request.headers.get("authorization") or ""
        if header[:7].lower() != "bearer ":
            return None
        return self.grants.tokens.get(header[len("Bearer ") :].strip())

    def is_open(self, method: str | None) -> bool:
        """Whether `method` is served without a token (initialize and notifications, where the scenario
        lets them in)."""
        return bool(self.open_methods) and (
            method in self.open_methods or (method or "").startswith("notifications/")
        )

    def gate(self, request: Arrival, method: str | None) -> Answer | None:
        """The answer to an MCP request the scenario refuses, or None to serve it."""
        if self.is_open(method):
            return None
        granted = self.token_of(request)
        if granted is None or granted[0] not in self.active_servers():
            return self.challenge()
        return None

    # -- routing ----------------------------------------------------------------------------------------

    def facts(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "mcp_url": self.mcp_url(),
            "prm_url": self.base + self.prm_path if self.prm_path else None,
            "prm_in_header": self.prm_in_header,
            "prm_resource": self.resource(),
            "prm_scopes": list(self.prm_scopes) if self.prm_scopes is not None else None,
            "challenge_scope": self.challenge_scope,
            #: The client IDs the registration endpoints issued (filled as they are), each with its server.
            "clients": self.grants.clients,
            "servers": [
                {
                    "issuer": s.issuer(self.base),
                    "prefix": s.at,
                    "metadata_path": s.metadata_path,
                    "metadata": s.metadata(self.base),
                }
                for s in self.servers
            ],
        }

    async def on_http(self, arrival: Arrival) -> HttpAnswer | None:
        """The metadata and authorization endpoints, and the challenge of an MCP request without a
        good token; None for an MCP request the scenario serves (the transport has recorded it)."""
        if not self.base:
            self.base = f"http://{arrival.headers.get('host') or '127.0.0.1'}"
            self.recording.facts["auth"] = self.facts()
        path = urlsplit(arrival.path).path
        if path == "/mcp":
            if arrival.method != "POST":
                return None
            answer = self.gate(arrival, _method_of(arrival.body))
            if answer is None:
                return None
        else:
            answer = self.route(arrival, path)
        status, headers, body = answer.encoded()
        return HttpAnswer(status, headers, body)

    def route(self, request: Arrival, path: str) -> Answer:
        """The answer of the metadata and authorization endpoints (404 for anything else)."""
        if path == self.prm_path and request.method == "GET":
            return Answer(200, self.prm_document())
        if path in self.traps:
            return Answer(404, {"error": "not_found"})
        for index, server in enumerate(self.servers):
            answer = self.serve_as(index, server, request, path)
            if answer is not None:
                return answer
        return Answer(404, {"error": "not_found"})

    def serve_as(self, index: int, server: AuthServer, request: Arrival, path: str) -> Answer | None:
        if path == server.metadata_path and request.method == "GET":
            return Answer(200, server.metadata(self.base))
        endpoint = path[len(server.at) :] if path.startswith(server.at + "/") else None
        if endpoint == "/authorize" and request.method == "GET":
            query = dict(parse_qsl(urlsplit(request.path).query, keep_blank_values=True))
            return self.grants.authorize(index, server, self.base, query)
        if endpoint == "/token" and request.method == "POST":
            return self.grants.token(index, server, form(request.body))
        if endpoint == "/register" and request.method == "POST" and server.registration:
            return self.grants.register(index, server, request.body)
        return None


def _method_of(body: bytes) -> str | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    method = value.get("method") if isinstance(value, dict) else None
    return method if isinstance(method, str) else None


# -- metadata discovery (auth/metadata-*) --------------------------------------------------------------


@scenario
class MetadataDefault(AuthScenario):
    name = "auth/metadata-default"
    description = "PRM at the path-inserted well-known URI named in WWW-Authenticate; RFC 8414 at the root"
    traps = (WELL_KNOWN_PRM,)


@scenario
class MetadataVar1(AuthScenario):
    name = "auth/metadata-var1"
    description = "PRM at the path-inserted well-known URI, not in the challenge; OIDC discovery"
    prm_in_header = False
    servers = (AuthServer(metadata_path=WELL_KNOWN_OIDC, openid=True),)


@scenario
class MetadataVar2(AuthScenario):
    name = "auth/metadata-var2"
    description = "PRM at the root well-known URI, not in the challenge; an issuer with a path (RFC 8414)"
    prm_path = WELL_KNOWN_PRM
    prm_in_header = False
    servers = (AuthServer(prefix="/tenant1", metadata_path=WELL_KNOWN_AS + "/tenant1"),)
    traps = (WELL_KNOWN_AS,)

    def resource(self) -> str:
        """The origin, as the official scenario publishes: metadata at the root well-known URI is that
        of the resource identifier without a path (RFC 9728 section 3), which a client must then send
        exactly (a parser adding "/" to the pathless URL is CLIENT-AUTH-011's)."""
        return self.prm_resource or self.base


@scenario
class MetadataVar3(AuthScenario):
    name = "auth/metadata-var3"
    description = "PRM at a custom URL named in the challenge; an issuer with a path, OIDC path appending"
    prm_path = "/custom/metadata/location.json"
    servers = (AuthServer(prefix="/tenant1", metadata_path="/tenant1" + WELL_KNOWN_OIDC, openid=True),)
    traps = (WELL_KNOWN_AS,)


# -- registration and the token endpoint -------------------------------------------------------------


@scenario
class BasicCimd(AuthScenario):
    name = "auth/basic-cimd"
    description = "the authorization server supports client ID metadata documents"
    servers = (AuthServer(cimd=True),)


#: The credentials `auth/pre-registration` gives the client in MCP_CONFORMANCE_CONTEXT.
PRE_REGISTERED = {"client_id": "pre-registered-client", "client_secret": "pre-registered-secret"}


@scenario
class PreRegistration(AuthScenario):
    name = "auth/pre-registration"
    description = "no registration endpoint; the client has pre-registered credentials (client_secret_basic)"
    context = PRE_REGISTERED
    servers = (AuthServer(registration=False, auth_methods=("client_secret_basic",)),)


@scenario
class TokenAuthBasic(AuthScenario):
    name = "auth/token-endpoint-auth-basic"
    description = "the authorization server supports client_secret_basic only"
    servers = (AuthServer(auth_methods=("client_secret_basic",)),)


@scenario
class TokenAuthPost(TokenAuthBasic):
    name = "auth/token-endpoint-auth-post"
    description = "the authorization server supports client_secret_post only"
    servers = (AuthServer(auth_methods=("client_secret_post",)),)


@scenario
class TokenAuthNone(TokenAuthBasic):
    name = "auth/token-endpoint-auth-none"
    description = "the authorization server supports public clients only (none)"
    servers = (AuthServer(auth_methods=("none",)),)


# -- scopes ----------------------------------------------------------------------------------------------


@scenario
class ScopeFromChallenge(AuthScenario):
    name = "auth/scope-from-www-authenticate"
    description = "the 401 challenge names the scope mcp:basic"
    challenge_scope = "mcp:basic"


@scenario
class ScopeFromSupported(AuthScenario):
    name = "auth/scope-from-scopes-supported"
    description = "no scope in the challenge; the PRM lists scopes_supported"
    prm_scopes = ("mcp:basic", "mcp:read", "mcp:write")


@scenario
class ScopeOmitted(AuthScenario):
    name = "auth/scope-omitted-when-undefined"
    description = "no scope in the challenge, no scopes_supported"


@scenario
class ScopeStepUp(AuthScenario):
    name = "auth/scope-step-up"
    description = "tools/call needs mcp:write: a 403 insufficient_scope challenge after the first grant"
    challenge_scope = "mcp:basic"
    prm_scopes = ("mcp:profile",)
    open_methods = ("initialize",)
    needed = "mcp:write"

    def gate(self, request: Arrival, method: str | None) -> Answer | None:
        refused = super().gate(request, method)
        if refused is not None or method != "tools/call":
            return refused
        granted = self.token_of(request)
        if granted is not None and self.needed not in granted[1]:
            self.recording.mark("step-up-challenged")
            return self.challenge(403, self.needed, "insufficient_scope")
        return None


@scenario
class ScopeRetryLimit(AuthScenario):
    name = "auth/scope-retry-limit"
    description = "every request with a token gets 403 insufficient_scope: the client must stop retrying"
    challenge_scope = "mcp:admin"
    prm_scopes = ("mcp:admin",)
    open_methods = ("initialize",)
    allow_client_error = True
    #: After this many refused requests with a token the endpoint answers 410: the test is over.
    LIMIT = 6

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.refused = 0

    def gate(self, request: Arrival, method: str | None) -> Answer | None:
        refused = super().gate(request, method)
        if refused is not None or self.is_open(method):
            return refused
        self.refused += 1
        if self.refused > self.LIMIT:
            return Answer(410, {"error": "test_complete"})
        return self.challenge(403, "mcp:admin", "insufficient_scope")


# -- 2026-07-28 (draft in the official suite) ------------------------------------------------------------


@scenario
class ResourceMismatch(AuthScenario):
    name = "auth/resource-mismatch"
    description = "the PRM's resource names another server: the client must not use it"
    revisions = (STATELESS,)
    prm_resource = "https://evil.example.com/mcp"
    allow_client_error = True


@scenario
class OfflineAccessScope(AuthScenario):
    name = "auth/offline-access-scope"
    description = "the authorization server lists offline_access and issues refresh tokens"
    revisions = (STATELESS,)
    prm_scopes = ("mcp:basic",)
    servers = (AuthServer(scopes=("mcp:basic", "offline_access"), refresh=True),)


@scenario
class OfflineAccessNotSupported(AuthScenario):
    name = "auth/offline-access-not-supported"
    description = "the authorization server does not list offline_access"
    revisions = (STATELESS,)
    prm_scopes = ("mcp:basic", "mcp:read")
    servers = (AuthServer(scopes=("mcp:basic", "mcp:read")),)


@scenario
class ServerMigration(AuthScenario):
    name = "auth/authorization-server-migration"
    description = "after the first request the PRM names a new authorization server"
    revisions = (STATELESS,)
    challenge_scope = "mcp:basic"
    servers = (
        AuthServer(prefix="/as1", metadata_path=WELL_KNOWN_AS + "/as1"),
        AuthServer(prefix="/as2", metadata_path=WELL_KNOWN_AS + "/as2"),
    )

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.moved = False

    def active_servers(self) -> tuple[int, ...]:
        return (1,) if self.moved else (0,)

    def gate(self, request: Arrival, method: str | None) -> Answer | None:
        granted = self.token_of(request)
        if granted is not None and granted[0] == 0 and not self.moved:
            self.moved = True  # the first server's token is good once; then the resource moves
            self.recording.mark("authorization-server-changed")
            return None
        return super().gate(request, method)


def _iss_scenario(name: str, supported: bool | None, sent: str, description: str) -> type[AuthScenario]:
    """An RFC 9207 scenario: whether the metadata advertises `iss`, and what the redirect carries."""

    class Iss(AuthScenario):
        revisions = (STATELESS,)
        allow_client_error = sent != "correct" and not (sent == "omit" and supported is None)
        servers = (AuthServer(iss_supported=supported, iss_in_redirect=sent),)

    Iss.name = name
    Iss.description = description
    Iss.__name__ = Iss.__qualname__ = "Iss" + "".join(p.title() for p in name[5:].split("-"))
    scenario(Iss)
    return Iss


ISS_SCENARIOS = (
    _iss_scenario("auth/iss-supported", True, "correct", "iss advertised and correct: proceed"),
    _iss_scenario("auth/iss-not-advertised", None, "omit", "iss neither advertised nor sent: proceed"),
    _iss_scenario("auth/iss-supported-missing", True, "omit", "iss advertised but absent: reject"),
    _iss_scenario("auth/iss-wrong-issuer", True, "wrong", "iss advertised, another issuer: reject"),
    _iss_scenario("auth/iss-unexpected", None, "wrong", "iss not advertised, another issuer: reject"),
    _iss_scenario("auth/iss-normalized", True, "normalized", "iss equal only after normalization: reject"),
)


@scenario
class MetadataIssuerMismatch(AuthScenario):
    name = "auth/metadata-issuer-mismatch"
    description = "the authorization server metadata names another issuer: the client must not use it"
    revisions = (STATELESS,)
    allow_client_error = True
    servers = (
        AuthServer(
            prefix="/mismatched-as",
            metadata_path=WELL_KNOWN_AS + "/mismatched-as",
            metadata_issuer=ATTACKER_ISSUER,
        ),
    )


# -- 2025-03-26: no protected resource metadata; the authorization base URL is the server's origin -----


@scenario
class MarchMetadata(AuthScenario):
    name = "auth/2025-03-26-oauth-metadata-backcompat"
    description = "no PRM; RFC 8414 metadata at the origin's root, its endpoints under /oauth"
    revisions = (MARCH,)
    prm_path = None
    servers = (AuthServer(endpoints="/oauth", iss_supported=None),)


@scenario
class MarchFallback(AuthScenario):
    name = "auth/2025-03-26-oauth-endpoint-fallback"
    description = "no PRM, no metadata: the default endpoints /authorize, /token, /register at the root"
    revisions = (MARCH,)
    prm_path = None
    # no metadata, so no issuer identifier: the redirect carries no RFC 9207 `iss` (as the official
    # scenario's); one there matches nothing a client knows, and a client may refuse it
    servers = (AuthServer(metadata_path=None, iss_supported=None, iss_in_redirect="omit"),)
