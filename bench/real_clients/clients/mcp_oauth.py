"""The Python `mcp` SDK's OAuth for the kit's mcp 1.x and 2.x programs: its own `OAuthClientProvider`
(an `httpx.Auth`), headless.

Why: the OAuth scenarios judge the SDK's authorization flow, so the program only wires up what a user
of the SDK wires up: client metadata with a loopback redirect URI, this program's client ID metadata
document URL, token storage (in memory: a run is one session), the redirect handler (the user's
browser; the scenario's authorization endpoint approves at once, so `contract.Browser` reads the
authorization response off the redirect) and the callback handler (the response's `code`, `state` and,
where the SDK takes it, RFC 9207's `iss`). Everything else (discovery, registration, scopes, PKCE, the
token request, step-up) is the SDK's. The context's credentials are the user's: pre-registered client
credentials seed the storage; the client credentials extension's scenarios use the SDK's providers for
that grant (`ClientCredentialsOAuthProvider`, `PrivateKeyJWTOAuthProvider`), as the official example
client chooses its provider by scenario. mcp 1.x and 2.x name all of this alike; 1.x's callback
returns `(code, state)`, 2.x's an `AuthorizationCodeResult`.
"""

from __future__ import annotations

from typing import Any

from contract import CIMD_URL, REDIRECT_URI, Browser, Contract, MemoryStorage
from mcp.client.auth import OAuthClientProvider
from mcp.shared import auth as shared_auth
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

CLIENT_CREDENTIALS = ("auth/client-credentials-basic", "auth/client-credentials-jwt")


def _metadata(name: str) -> OAuthClientMetadata:
    """What the program registers: a native client with a loopback redirect URI (the SDK's defaults
    for the rest)."""
    return OAuthClientMetadata(
        client_name=name,
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]  # pydantic coerces the URL
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )


def _pre_registered(context: dict[str, Any]) -> OAuthClientInformationFull | None:
    """The context's pre-registered credentials, as a user configures them (a confidential client
    authenticates with HTTP Basic, RFC 6749 section 2.3.1's method every server supports)."""
    if "client_id" not in context:
        return None
    secret = context.get("client_secret")
    return OAuthClientInformationFull(
        client_id=str(context["client_id"]),
        client_secret=secret,
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
    )


def _callback(browser: Browser) -> Any:
    """The SDK's callback handler over what the browser read off the redirect."""
    result_type = getattr(shared_auth, "AuthorizationCodeResult", None)  # 2.x: with RFC 9207's iss

    async def callback() -> Any:
        answer = browser.answer
        if result_type is None:
            return answer.get("code", ""), answer.get("state")
        return result_type(code=answer.get("code", ""), state=answer.get("state"), iss=answer.get("iss"))

    return callback


def _client_credentials(contract: Contract) -> OAuthClientProvider:
    """The client credentials extension: the SDK's provider for the grant the context's credentials
    are for (a private key: `private_key_jwt`; a secret: `client_secret_basic`)."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    context, storage = contract.context, MemoryStorage()
    client_id = str(context.get("client_id", ""))
    if "private_key_pem" in context:
        jwt = SignedJWTParameters(
            issuer=client_id,
            subject=client_id,
            signing_key=str(context["private_key_pem"]),
            signing_algorithm=str(context.get("signing_algorithm") or "ES256"),
        )
        return PrivateKeyJWTOAuthProvider(contract.url, storage, client_id, jwt.create_assertion_provider())
    secret = str(context.get("client_secret", ""))
    return ClientCredentialsOAuthProvider(contract.url, storage, client_id, secret)


def oauth_provider(contract: Contract, name: str) -> OAuthClientProvider:
    """The SDK's OAuth provider for this run."""
    if contract.scenario in CLIENT_CREDENTIALS:
        return _client_credentials(contract)
    browser = Browser()
    return OAuthClientProvider(
        server_url=contract.url,
        client_metadata=_metadata(name),
        storage=MemoryStorage(_pre_registered(contract.context)),
        redirect_handler=browser.visit,
        callback_handler=_callback(browser),
        client_metadata_url=CIMD_URL,
    )
