"""The client the harness is to the authorization server: the one the user registered (--client-id),
else one it registers (RFC 7591), else one its own metadata document describes (CIMD), served on
loopback for the server to fetch.

Why its own module: the code grant rows need a client and must not judge how it was obtained; the rows
that judge registration and metadata documents own those exchanges, and the grant is blocked by them
when the client they give is what failed.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformance.pack_api import IssuerContext, blocked, missed, skip

from .discovery import Found, endpoint

DCR_CHECK = "authorization-server.registration.dynamic"
CIMD_CHECK = "authorization-server.registration.cimd"
#: The redirect URI of a client the harness registers itself: loopback, never listened on (the
#: harness reads the redirect's Location; RFC 8252 section 7.3 lets the port vary).
LOOPBACK_REDIRECT = "http://127.0.0.1/callback"


@dataclass(frozen=True)
class Client:
    """A client of the authorization server, and how it authenticates at the token endpoint."""

    client_id: str
    redirect_uri: str
    secret: str | None = None
    #: "none" (a public client), "client_secret_basic" or "client_secret_post".
    auth: str = "none"
    #: How it was obtained: "given", "registered" or "metadata-document".
    origin: str = "given"

    @property
    def public(self) -> bool:
        return self.auth == "none"


def given(ctx: IssuerContext, found: Found) -> Client | None:
    """The client the user named (--client-id), authenticating as the metadata allows."""
    client_id = ctx.settings.get("client_id")
    if not client_id:
        return None
    secret = ctx.settings.get("client_secret") or None
    redirect = ctx.settings.get("redirect_uri") or LOOPBACK_REDIRECT
    if secret is None:
        return Client(client_id, redirect)
    methods = found.document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    auth = "client_secret_post" if "client_secret_basic" not in methods else "client_secret_basic"
    return Client(client_id, redirect, secret, auth)


async def registered(ctx: IssuerContext, found: Found) -> Client:
    """A public client registered once per revision (RFC 7591): ASRV-DCR-001's case registers it and
    judges the answer; a later case needing it is blocked by that case when it failed."""
    url = endpoint(found, "registration_endpoint")
    if url is None:
        skip("the metadata names no registration_endpoint", kind="not-applicable")

    async def register() -> Client:
        document = {
            "client_name": "mcp-conformance",
            "redirect_uris": [LOOPBACK_REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }
        if ctx.settings.get("scope"):
            document["scope"] = ctx.settings["scope"]
        exchange = await ctx.http("POST", url, json=document, headers={"Accept": "application/json"})
        body = exchange.json()
        if (
            not 200 <= exchange.status < 300
            or not isinstance(body, dict)
            or not isinstance(body.get("client_id"), str)
        ):
            missed(f"registration answered HTTP {exchange.status} without a client_id", **exchange.excerpt())
        # RFC 7591 section 3.2.1 states 201 and application/json without a keyword: noted, WARN.
        if exchange.status != 201 or "application/json" not in exchange.content_type.lower():
            said = f"HTTP {exchange.status}, {exchange.content_type or 'no type'}"
            ctx.shared["registration-said"] = (said, exchange.excerpt())
        method = body.get("token_endpoint_auth_method", "none")
        secret = body.get("client_secret") if isinstance(body.get("client_secret"), str) else None
        auth = "none" if method == "none" or secret is None else str(method)
        return Client(body["client_id"], LOOPBACK_REDIRECT, secret, auth, "registered")

    return await ctx.remember_once("registered-client", DCR_CHECK, register)


async def of_grant(ctx: IssuerContext, found: Found) -> Client:
    """The client the code grant rows use: the user's, else a registered one, else a metadata
    document's (when ASRV-CIMD-001 saw the server accept one)."""
    chosen = given(ctx, found)
    if chosen is not None:
        return chosen
    if endpoint(found, "registration_endpoint"):
        return await registered(ctx, found)
    if found.document.get("client_id_metadata_document_supported") is True:
        ok = ctx.shared.get("metadata-document-client")
        if ok is None:
            blocked(CIMD_CHECK, "the server did not accept the harness's client ID metadata document")
        return ok
    skip(
        "no client: the server offers neither registration nor client ID metadata documents; register one "
        "and give --client-id (and --client-secret-env, --redirect-uri)",
        kind="needs-option",
        option="--client-id",
    )


class DocumentServer(ThreadingHTTPServer):
    """Serves client ID metadata documents on 127.0.0.1 and remembers which were fetched."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _DocumentHandler)
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        self.fetched: list[str] = []

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    @property
    def redirect_uri(self) -> str:
        return self.base + "/callback"

    def url(self, name: str) -> str:
        return f"{self.base}/{name}.json"

    def document(self, name: str) -> dict[str, Any] | None:
        """`client`: a public client whose client_id is its own URL; `impostor`: the same claiming the
        `client` document's URL (refused by a server that holds a document to its URL)."""
        if name not in ("client", "impostor"):
            return None
        return {
            "client_id": self.url("client"),
            "client_name": "mcp-conformance",
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }


class _DocumentHandler(BaseHTTPRequestHandler):
    server: DocumentServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: what was fetched is evidence, not output."""

    def do_GET(self) -> None:
        name = self.path.strip("/").removesuffix(".json")
        self.server.fetched.append(self.path)
        document = self.server.document(name)
        data = json.dumps(document).encode() if document is not None else b'{"error":"not_found"}'
        self.send_response(200 if document is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def document_server(ctx: IssuerContext) -> DocumentServer:
    """The target's one document server, started on first use and stopped when its cases are done."""
    server = ctx.target_memo.get("document-server")
    if server is None:
        server = DocumentServer()
        threading.Thread(target=server.serve_forever, name="cimd-documents", daemon=True).start()
        ctx.target_memo["document-server"] = server
        ctx.on_close(server.stop)
    return server
