"""A client program on FastMCP's `Client` (PyPI `fastmcp`).

Why: the kit judges the SDK's client, so this is what a FastMCP user writes: a `Client` on the transport
FastMCP offers for the contract's server (Streamable HTTP, SSE, or a stdio command), with the user's
roots and a sampling and an elicitation handler, then plain client calls. The contract's revision is
passed as FastMCP's `mode`, as for the mcp 2.x `Client` it wraps: a 2026-07-28-era revision pins it, an
earlier one asks for the `initialize` handshake ('legacy'). The handler accepts every form with only its
required fields without a default filled in (`contract.form_content`): defaults are the SDK's to apply.
FastMCP's `call_tool` raises on a tool result with `isError` unless told not to
(`raise_on_error=False`), which the user does: such a result is an answer, not a failed step.

Over Streamable HTTP the transport carries FastMCP's OAuth helper (`OAuth`: the SDK's flow, with its own
redirect listener on a loopback port; in memory storage by default): the user's browser is
`contract.browse`, registered as the preferred browser of Python's `webbrowser` (which the helper
opens), so the run is headless. The context's pre-registered credentials go to `OAuth(client_id=,
client_secret=)`, and the client credentials extension's scenarios use FastMCP's providers for that
grant, as the official example client chooses its provider by scenario.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from typing import Any

from contract import CIMD_URL, ROOTS, SAMPLED, WATCH, Contract, SdkSession, act, form_content, main
from fastmcp import Client
from fastmcp.client.auth import (
    ClientCredentialsOAuthProvider,
    OAuth,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport
from mcp import types


async def sample(_messages: Any, _params: Any, _context: Any) -> types.CreateMessageResult:
    """The user's model (a stub): the same assistant message for every request."""
    return types.CreateMessageResult.model_validate(SAMPLED)


async def accept_form(_message: str, _type: Any, params: Any, _context: Any) -> ElicitResult[Any]:
    """The user accepts the form, filling in only its required fields without a default (the defaults
    are the SDK's); a URL-mode request (the page opened out of band) is accepted without content, as
    the schema wants."""
    if getattr(params, "mode", None) == "url":
        return ElicitResult(action="accept")
    return ElicitResult(action="accept", content=form_content(params))


def headless_browser() -> None:
    """`contract.browse` as Python's preferred browser, in the background (the helper's listener
    starts once the browser is opened)."""
    here = str(Path(__file__).resolve().parent)
    code = f"import sys; sys.path.insert(0, {here!r}); import contract; contract.browse(sys.argv[1])"
    browser = webbrowser.BackgroundBrowser([sys.executable, "-c", code, "%s"])
    webbrowser.register("kit-headless", None, browser, preferred=True)


def auth_of(contract: Contract) -> Any:
    """FastMCP's OAuth for this run: the client credentials providers in their scenarios, else the
    `OAuth` helper (pre-registered credentials from the context, this program's metadata URL)."""
    context = contract.context
    client_id = str(context.get("client_id", "")) or None
    if contract.scenario == "auth/client-credentials-jwt":
        jwt = SignedJWTParameters(
            issuer=str(client_id),
            subject=str(client_id),
            signing_key=str(context["private_key_pem"]),
            signing_algorithm=str(context.get("signing_algorithm") or "ES256"),
        )
        return PrivateKeyJWTOAuthProvider(
            contract.url, client_id=str(client_id), assertion_provider=jwt.create_assertion_provider()
        )
    if contract.scenario == "auth/client-credentials-basic":
        secret = str(context.get("client_secret", ""))
        return ClientCredentialsOAuthProvider(contract.url, client_id=str(client_id), client_secret=secret)
    headless_browser()
    secret = context.get("client_secret")
    # a confidential client authenticates with HTTP Basic (RFC 6749 section 2.3.1), as registered: the
    # user says so (FastMCP's default for a pre-registered secret is client_secret_post, whatever the
    # authorization server supports)
    method = {"token_endpoint_auth_method": "client_secret_basic"} if secret else None
    return OAuth(
        contract.url,
        client_name="kit-fastmcp-client",
        additional_client_metadata=method,
        client_metadata_url=None if client_id else CIMD_URL,
        client_id=client_id,
        client_secret=str(secret) if secret else None,
    )


def transport_of(contract: Contract) -> Any:
    """FastMCP's transport for the contract's server."""
    if contract.transport == "stdio":
        return StdioTransport(command=contract.command[0], args=contract.command[1:])
    if contract.transport == "sse":
        return SSETransport(contract.url)
    return StreamableHttpTransport(contract.url, auth=auth_of(contract))


async def run(contract: Contract) -> int:
    mode = contract.version if contract.modern else "legacy"
    client = Client(
        transport_of(contract),
        mode=mode,
        roots=[types.Root.model_validate(root) for root in ROOTS],
        sampling_handler=sample,
        elicitation_handler=accept_form,
        message_handler=WATCH.handle,
    )
    async with client:
        initialized = client.initialize_result
        declared = initialized.capabilities.model_dump(exclude_none=True) if initialized else {}
        session = SdkSession(client, declared, progress="progress_handler", raise_on_error=False)
        return await act(contract, session)


if __name__ == "__main__":
    sys.exit(main(run))
