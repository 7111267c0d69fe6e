"""A client program on FastMCP's `Client` (PyPI `fastmcp`).

Why: the kit judges the SDK's client, so this is what a FastMCP user writes: a `Client` on the
transport FastMCP offers for the contract's server (Streamable HTTP, SSE, or a stdio command), with an
elicitation handler, then plain client calls. The contract's revision is passed as FastMCP's `mode`,
as for the mcp 2.x `Client` it wraps: a 2026-07-28-era revision pins it, an earlier one asks for the
`initialize` handshake ('legacy'). The handler accepts every form untouched (empty content): defaults
are the SDK's to apply. FastMCP's `call_tool` raises on a tool result with `isError` unless told not to
(`raise_on_error=False`), which the user does: such a result is an answer, not a failed step.
"""

from __future__ import annotations

import sys
from typing import Any

from contract import WATCH, Contract, SdkSession, act, main
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport


async def accept_untouched(_message: str, _type: Any, params: Any, _context: Any) -> ElicitResult[Any]:
    """The user accepts the form as offered, filling in nothing; a URL-mode request (the page opened
    out of band) is accepted without content, as the schema wants."""
    if getattr(params, "mode", None) == "url":
        return ElicitResult(action="accept")
    return ElicitResult(action="accept", content={})


def transport_of(contract: Contract) -> Any:
    """FastMCP's transport for the contract's server."""
    if contract.transport == "stdio":
        return StdioTransport(command=contract.command[0], args=contract.command[1:])
    if contract.transport == "sse":
        return SSETransport(contract.url)
    return StreamableHttpTransport(contract.url)


async def run(contract: Contract) -> int:
    mode = contract.version if contract.modern else "legacy"
    client = Client(
        transport_of(contract), mode=mode, elicitation_handler=accept_untouched, message_handler=WATCH.handle
    )
    async with client:
        initialized = client.initialize_result
        declared = initialized.capabilities.model_dump(exclude_none=True) if initialized else {}
        session = SdkSession(client, declared, progress="progress_handler", raise_on_error=False)
        return await act(contract, session)


if __name__ == "__main__":
    sys.exit(main(run))
