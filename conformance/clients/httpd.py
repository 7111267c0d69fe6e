"""A raw HTTP/1.1 server on loopback: every request the client sends is read byte for byte (request
line, each header as sent, the body by Content-Length or chunked) and handed on as it is; nothing
validates or drops it, as a web framework or an SDK's server transport would.

Answers are written by the handler through `Response`: a whole body (`send`), or a stream of
server-sent events that ends when the handler closes it (`start_stream`, `write`, `end`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

#: The most a request line plus headers may take, and the most a body may take.
HEAD_LIMIT = 64 * 1024
BODY_LIMIT = 8 * 1024 * 1024
REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}


@dataclass
class Request:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        found = [value for key, value in self.headers if key.lower() == wanted]
        return found[-1] if found else None


class Response:
    """One answer being written. A streamed answer closes its connection when it ends (no length)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.started = False
        self.ended = False
        self.streaming = False

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
        """A whole answer: status, headers and body with its length."""
        if self.started:
            return
        self.started = self.ended = True
        self.writer.write(self._head(status, {**headers, "Content-Length": str(len(body))}) + body)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def start_stream(self, headers: dict[str, str]) -> None:
        """Begin a `text/event-stream` answer; events follow with `write`, `end` closes it."""
        if self.started:
            return
        self.started = self.streaming = True
        head = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers}
        self.writer.write(self._head(200, {**head, "Connection": "close"}))
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def write(self, data: bytes) -> None:
        if self.ended:
            return
        self.writer.write(data)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def end(self) -> None:
        if self.ended:
            return
        self.ended = True
        with contextlib.suppress(ConnectionError, OSError):
            self.writer.close()


Handler = Callable[[Request, Response], Awaitable[None]]


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, list[tuple[str, str]]] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 3:
        return None
    headers = []
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return parts[0], parts[1], headers


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    found = {name.lower(): value for name, value in headers}
    if "chunked" in found.get("transfer-encoding", "").lower():
        body = bytearray()
        while len(body) <= BODY_LIMIT:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readline()
        raise ValueError("body over the cap")
    length = int(found.get("content-length", "0") or 0)
    if length > BODY_LIMIT:
        raise ValueError("body over the cap")
    return await reader.readexactly(length) if length else b""


class HttpServer:
    """Serves `handler` on 127.0.0.1 at an ephemeral port until `close`."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        self.writers.add(writer)
        try:
            while True:
                head = await _read_head(reader)
                if head is None:
                    return
                try:
                    body = await _read_body(reader, head[2])
                except (ValueError, asyncio.IncompleteReadError, ConnectionError):
                    return
                response = Response(writer)
                await self.handler(Request(head[0], head[1], head[2], body), response)
                if response.streaming or writer.is_closing():
                    return
        finally:
            self.writers.discard(writer)
            with contextlib.suppress(ConnectionError, OSError):
                writer.close()
            if task is not None:
                self.tasks.discard(task)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for writer in list(self.writers):
            with contextlib.suppress(ConnectionError, OSError):
                writer.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=2)
