"""A client program on the Python `mcp` SDK 2.x (its high-level `Client`).

Why: the kit judges the SDK's client, so this is what a user of mcp 2.x writes: a `Client` on the URL
(Streamable HTTP), on the SDK's HTTP+SSE transport, or on `StdioServerParameters`, with sampling,
elicitation and roots callbacks (the SDK declares what it is given), then plain client calls. The
contract's revision is passed as the SDK's `mode`: a 2026-07-28-era revision pins it (stateless, no
probe), an earlier one asks for the `initialize` handshake ('legacy'). The callback accepts every form
with only its required fields without a default filled in (`contract.form_content`): defaults are the
SDK's to apply. Over Streamable HTTP the SDK's HTTP client carries the SDK's OAuth provider.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import Any

from contract import WATCH, Contract, SdkSession, act, main
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_handlers import accept_form, list_roots, sample
from mcp_oauth import oauth_provider


async def server_of(contract: Contract, stack: AsyncExitStack) -> Any:
    """What `Client` connects to: the stdio command, an SSE transport, or Streamable HTTP whose HTTP
    client carries the SDK's OAuth provider (mcp_oauth.py)."""
    if contract.transport == "stdio":
        return StdioServerParameters(command=contract.command[0], args=contract.command[1:])
    if contract.transport == "sse":
        return sse_client(contract.url)
    auth = oauth_provider(contract, "kit-mcp2-client")
    http = await stack.enter_async_context(create_mcp_http_client(auth=auth))
    return streamable_http_client(contract.url, http_client=http)


async def run(contract: Contract) -> int:
    mode = contract.version if contract.modern else "legacy"
    async with AsyncExitStack() as stack:
        server = await server_of(contract, stack)
        client = await stack.enter_async_context(
            Client(
                server,
                mode=mode,
                sampling_callback=sample,
                elicitation_callback=accept_form,
                list_roots_callback=list_roots,
                message_handler=WATCH.handle,
            )
        )
        declared = client.server_capabilities.model_dump(exclude_none=True)
        return await act(contract, SdkSession(client, declared))


if __name__ == "__main__":
    sys.exit(main(run))
