"""A client program on the Python `mcp` SDK 2.x (its high-level `Client`).

Why: the kit judges the SDK's client, so this is what a user of mcp 2.x writes: a `Client` on the URL
(Streamable HTTP), on the SDK's HTTP+SSE transport, or on `StdioServerParameters`, with an elicitation
callback, then plain client calls. The contract's revision is passed as the SDK's `mode`: a
2026-07-28-era revision pins it (stateless, no probe), an earlier one asks for the `initialize`
handshake ('legacy'). The callback accepts every form untouched (empty content): defaults are the
SDK's to apply.
"""

from __future__ import annotations

import sys
from typing import Any

from contract import WATCH, Contract, SdkSession, act, main
from mcp import Client, StdioServerParameters, types
from mcp.client.sse import sse_client


async def accept_untouched(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The user accepts the form as offered, filling in nothing; a URL-mode request (the page opened
    out of band) is accepted without content, as the schema wants."""
    if getattr(params, "mode", None) == "url":
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="accept", content={})


def server_of(contract: Contract) -> Any:
    """What `Client` connects to: a URL, an SSE transport, or the stdio command."""
    if contract.transport == "stdio":
        return StdioServerParameters(command=contract.command[0], args=contract.command[1:])
    if contract.transport == "sse":
        return sse_client(contract.url)
    return contract.url


async def run(contract: Contract) -> int:
    mode = contract.version if contract.modern else "legacy"
    async with Client(
        server_of(contract), mode=mode, elicitation_callback=accept_untouched, message_handler=WATCH.handle
    ) as client:
        declared = client.server_capabilities.model_dump(exclude_none=True)
        return await act(contract, SdkSession(client, declared))


if __name__ == "__main__":
    sys.exit(main(run))
