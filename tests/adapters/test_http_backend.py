"""The HTTP adapter's byte pipe (`conformance.adapters.asyncio_net`) behaves as httpx's own.

The adapter swaps httpcore's anyio backend for asyncio streams (a tenth of a loopback round trip per
call, bench/per_call.py). These tests hold the swap to account with real sockets on 127.0.0.1: it
is really in use, a refused port is still "unreachable", a connection the server closes while idle
is not reused, a stalled answer still times out, and a body larger than the reader's buffer limit
arrives whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from conformance.adapters.asyncio_net import READ_LIMIT, AsyncioBackend
from conformance.adapters.base import TargetUnreachable, TransportTimeout
from conformance.adapters.http import HttpAdapter
from conformance.adapters.transcript import Transcript

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lengths = [
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    ]
    length = lengths[0] if lengths else 0
    return await reader.readexactly(length)


def answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def echo_body(request: bytes, extra: str = "") -> bytes:
    msg_id = json.loads(request)["id"]
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"pad": extra}}).encode()


async def exchange(adapter: HttpAdapter, msg_id: int, timeout: float = 5.0) -> Any:
    """The parsed answer to one request (None when none came)."""
    message = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "ping"}).encode()
    reply = await adapter.exchange(message, expect_id=msg_id, timeout=timeout)
    return reply.response.value if reply.response is not None else None


def test_the_asyncio_backend_is_in_use_and_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[str, int]] = []
    connect = AsyncioBackend.connect_tcp

    async def counting(self: AsyncioBackend, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        opened.append((host, port))
        return await connect(self, host, port, *args, **kwargs)

    monkeypatch.setattr(AsyncioBackend, "connect_tcp", counting)

    async def one_per_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # One answer, then the server closes the idle connection without saying so in a header.
        writer.write(answer(echo_body(await read_request(reader))))
        await writer.drain()
        writer.close()

    async def go() -> None:
        async with serve(one_per_connection) as url:
            adapter = HttpAdapter(url, Transcript())
            await adapter.start()
            try:
                assert adapter.network_backend == "asyncio"
                for msg_id in range(1, 6):
                    response = await exchange(adapter, msg_id)
                    assert isinstance(response, dict) and response["id"] == msg_id
                    await asyncio.sleep(0.05)  # the server's FIN reaches the idle pooled connection
            finally:
                await adapter.close()
        # Every request went through asyncio streams, each on a new connection: the closed idle
        # one was recognised as such and never reused.
        assert len(opened) == 5

    asyncio.run(go())


def test_refused_port_is_unreachable() -> None:
    async def go() -> None:
        async with serve(lambda r, w: asyncio.sleep(0)) as url:
            pass  # closed: the port is now refused
        adapter = HttpAdapter(url, Transcript())
        await adapter.start()
        try:
            with pytest.raises(TargetUnreachable):
                await exchange(adapter, 1)
        finally:
            await adapter.close()

    asyncio.run(go())


def test_a_stalled_answer_times_out() -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        await writer.drain()
        await asyncio.sleep(10)

    async def go() -> None:
        async with serve(stall) as url:
            adapter = HttpAdapter(url, Transcript())
            await adapter.start()
            try:
                with pytest.raises(TransportTimeout):
                    await exchange(adapter, 1, timeout=0.5)
            finally:
                await adapter.close()

    asyncio.run(go())


def test_a_body_beyond_the_read_limit_arrives_whole() -> None:
    pad = "x" * (3 * READ_LIMIT)

    async def big(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer(echo_body(await read_request(reader), pad)))
        await writer.drain()
        writer.close()

    async def go() -> None:
        async with serve(big) as url:
            adapter = HttpAdapter(url, Transcript())
            await adapter.start()
            try:
                response = await exchange(adapter, 7)
                assert isinstance(response, dict) and response["result"]["pad"] == pad
            finally:
                await adapter.close()

    asyncio.run(go())


def test_every_client_shares_one_verifying_tls_context() -> None:
    """The CA bundle is loaded once per process, not once per session's client: every client's pool
    holds the one context, which still verifies certificates and host names."""
    import ssl

    from conformance.adapters.asyncio_net import async_client, tls_context

    clients = [async_client(max_connections=1, max_keepalive=1, timeout=1.0)[0] for _ in range(2)]
    context = tls_context()
    assert all(c._transport._pool._ssl_context is context for c in clients)  # type: ignore[attr-defined]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    for client in clients:
        asyncio.run(client.aclose())
