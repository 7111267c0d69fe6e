"""httpcore's network layer on plain asyncio streams, for both HTTP adapters (Streamable HTTP, legacy SSE).

Why: httpx's async client reaches the socket through httpcore's anyio backend, which opens a cancel
scope around every read and write and rebuilds attribute tables on every idle-connection check.
Measured on the reference server (bench/per_call.py) that made each call about 0.1 ms slower than it
needs to be, a tenth of a loopback round trip. The harness already runs on asyncio, so it gives
httpcore asyncio's own streams. Everything above the socket (h11's strict HTTP/1.1 parsing, TLS,
connection pooling, httpx's errors and models) stays httpx's; only the byte pipe changes.

Errors are httpcore's own (`ReadTimeout`, `ConnectError`, ...), which httpx maps to its exceptions
exactly as it does for the anyio backend, so callers see no difference.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from conformance.adapters.decoding import accept_encoding

#: Bytes a StreamReader may buffer; above it asyncio pauses reading (a 16 MiB answer still streams).
READ_LIMIT = 1 << 20


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP (or TLS) connection as an asyncio StreamReader and StreamWriter."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout(f"no bytes within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ReadError(exc) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            if self._writer.transport.get_write_buffer_size():
                async with asyncio.timeout(timeout):
                    await self._writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not write within {timeout} s") from None
        except OSError as exc:
            raise httpcore.WriteError(exc) from exc

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, TimeoutError, ssl.SSLError):
            async with asyncio.timeout(1.0):
                await self._writer.wait_closed()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no TLS handshake within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(exc) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Asked of an idle pooled connection: readable means the server closed it (or sent
            # something unasked), so it must not carry the next request.
            return self._reader.at_eof() or self._writer.is_closing()
        names = {"client_addr": "sockname", "server_addr": "peername"}
        return self._writer.get_extra_info(names.get(info, info))


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Opens `AsyncioStream`s; plugged into httpx's connection pool by `async_client`."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, limit=READ_LIMIT, local_addr=(local_address, 0) if local_address else None
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(exc) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_unix_connection(path, limit=READ_LIMIT)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(exc) from exc
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default verifying TLS context (its CA bundle, no environment), made once per process.

    Why once: loading the CA bundle costs about 30 ms of CPU, and a run opens a client per session
    (dozens over Streamable HTTP); one context serves every client, as an `ssl.SSLContext` may."""
    return httpx.create_ssl_context(trust_env=False)


def async_client(
    *, max_connections: int, max_keepalive: int, timeout: float
) -> tuple[httpx.AsyncClient, str]:
    """An httpx client on `AsyncioBackend`, and the name of the backend it really uses.

    httpx has no public way to choose httpcore's backend, so the new transport's pool is handed
    one. Should a future httpx lay out its transport differently, the client keeps
    httpx's own backend and the name says "anyio", which tests/adapters/test_http_backend.py catches.
    """
    transport = httpx.AsyncHTTPTransport(
        verify=tls_context(),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_keepalive),
        trust_env=False,
    )
    backend = "anyio"
    pool = getattr(transport, "_pool", None)
    if isinstance(pool, httpcore.AsyncConnectionPool) and hasattr(pool, "_network_backend"):
        # The pool is new and empty: every connection it opens will come from this backend, with
        # every other setting (TLS context, keep-alive expiry, retries) exactly as httpx chose it.
        pool._network_backend = AsyncioBackend()
        backend = "asyncio"
    client = httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        timeout=httpx.Timeout(timeout),
        trust_env=False,
        # The codings the adapters decode themselves (conformance/adapters/decoding.py), not httpx's.
        headers={"Accept-Encoding": accept_encoding()},
    )
    return client, backend
