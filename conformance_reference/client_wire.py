"""The reference client's transports: Streamable HTTP (a POST per message, answers as JSON or an event
stream, a closed stream resumed with GET after its retry field), legacy HTTP+SSE (2024-11-05) and stdio
(it starts the server the `stdio:` address names). Each hands the server's own requests to the client
(`answer_server`) and returns the answer to the client's request."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Protocol
from urllib.parse import urljoin

import httpx

from conformance.adapters.sse_parse import SseParser


class SessionExpired(Exception):
    """The server answered a request of the session with HTTP 404: the session is gone."""


class Speaker(Protocol):
    """What a wire asks of the client it carries (`client.ReferenceClient`): the few places a mutant
    changes what goes on the wire."""

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]: ...

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]: ...

    def retry_wait(self, retry_ms: int) -> float: ...

    def resume_headers(self, last_event_id: str | None) -> dict[str, str]: ...

    async def notified(self, message: dict[str, Any]) -> None: ...


TIMEOUT = 10.0
ACCEPT = "application/json, text/event-stream"
EVENT_BYTES = 4 * 1024 * 1024


class Wire:
    def __init__(self, client: Speaker) -> None:
        self.client = client
        self.waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}

    async def start(self) -> None:
        """Connect (a stream to open, a server to start)."""

    def negotiated(self, version: str) -> None:
        """The version initialize agreed on."""

    async def send(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request; return the message answering it (read by `deliver`)."""
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[message["id"]] = waiter
        try:
            await self.send(message)
        except SessionExpired:
            self.waiting.pop(message["id"], None)
            raise
        return await asyncio.wait_for(waiter, TIMEOUT)

    async def deliver(self, message: Any) -> None:
        """A message from the server: an answer to a waiting request, or a request to answer."""
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:
            await self.send(self.client.answer_server(message))
        elif "method" in message:
            await self.client.notified(message)
        elif message.get("id") in self.waiting and not self.waiting[message["id"]].done():
            self.waiting.pop(message["id"]).set_result(message)

    async def close(self) -> None:
        """Disconnect."""


async def _events(response: httpx.Response) -> Any:
    """(event, parser) of an event-stream response, as they arrive."""
    parser = SseParser(EVENT_BYTES)
    async for chunk in response.aiter_bytes():
        for event in parser.feed(chunk):
            yield event, parser


class HttpWire(Wire):
    def __init__(self, url: str, client: Speaker) -> None:
        super().__init__(client)
        self.url = url
        self.http = httpx.AsyncClient(timeout=TIMEOUT)
        self.session: str | None = None
        self.version: str | None = None

    def negotiated(self, version: str) -> None:
        self.version = version

    def _headers(self, message: dict[str, Any]) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        return {**headers, **self.client.headers_for(message)}

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        async with self.http.stream(
            "POST", self.url, content=body, headers=self._headers(message)
        ) as response:
            if response.status_code == 404 and self.session and "id" in message:
                self.session = None  # the session is gone: a new one starts without its ID
                raise SessionExpired(message["method"])
            self.session = response.headers.get("mcp-session-id", self.session)
            kind = response.headers.get("content-type", "")
            if kind.startswith("text/event-stream"):
                await self._stream(response, message.get("id"))
            elif kind.startswith("application/json"):
                await self.deliver(json.loads(await response.aread()))

    async def _stream(self, response: httpx.Response, wanted: Any) -> None:
        """Read an event stream; when it ends before the answer to `wanted`, resume it with GET."""
        last_id, retry = None, None
        async for event, parser in _events(response):
            last_id, retry = event.id or last_id, parser.retry if parser.retry is not None else retry
            if event.data.strip():
                await self.deliver(json.loads(event.data))
        if wanted is not None and wanted in self.waiting and retry is not None:
            asyncio.get_running_loop().create_task(self._resume(last_id, retry, wanted))

    def get_headers(self, last_id: str | None) -> dict[str, str]:
        """A GET's headers: the event stream accepted, the session's, and where to resume from."""
        headers = {"Accept": "text/event-stream", **self.client.resume_headers(last_id)}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    async def listen(self, last_id: str | None) -> str | None:
        """One GET stream for the server's own messages, read to its end; the last event ID it gave
        (to resume from) is returned."""
        async with self.http.stream("GET", self.url, headers=self.get_headers(last_id)) as response:
            async for event, _ in _events(response):
                last_id = event.id or last_id
                if event.data.strip():
                    await self.deliver(json.loads(event.data))
        return last_id

    async def _resume(self, last_id: str | None, retry: int, wanted: Any) -> None:
        await asyncio.sleep(self.client.retry_wait(retry))
        async with self.http.stream("GET", self.url, headers=self.get_headers(last_id)) as response:
            async for event, _ in _events(response):
                if event.data.strip():
                    await self.deliver(json.loads(event.data))
                if wanted not in self.waiting:
                    return

    async def close(self) -> None:
        await self.http.aclose()


class LegacySseWire(Wire):
    """2024-11-05: a GET stream first, whose `endpoint` event names where to POST."""

    def __init__(self, url: str, client: Speaker) -> None:
        super().__init__(client)
        self.url = url
        self.http = httpx.AsyncClient(timeout=TIMEOUT)
        self.endpoint: asyncio.Future[str] | None = None
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.endpoint = asyncio.get_running_loop().create_future()
        self.reader = asyncio.create_task(self._read())
        await asyncio.wait_for(asyncio.shield(self.endpoint), TIMEOUT)

    async def _read(self) -> None:
        assert self.endpoint is not None
        async with self.http.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as response:
            async for event, _ in _events(response):
                if event.event == "endpoint" and not self.endpoint.done():
                    self.endpoint.set_result(urljoin(self.url, event.data.decode()))
                elif event.data.strip():
                    await self.deliver(json.loads(event.data))

    async def send(self, message: dict[str, Any]) -> None:
        assert self.endpoint is not None
        url = await self.endpoint
        await self.http.post(
            url, content=json.dumps(message).encode(), headers={"Content-Type": "application/json"}
        )

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(BaseException):
                await self.reader
        await self.http.aclose()


class StdioWire(Wire):
    """stdio: the client starts the server, one JSON-RPC message per line each way."""

    def __init__(self, argv: list[str], client: Speaker) -> None:
        super().__init__(client)
        self.argv = argv
        self.proc: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            if line.strip():
                await self.deliver(json.loads(line))

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def close(self) -> None:
        """Close the server's stdin, then wait for it to exit (the stdio transport's shutdown)."""
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 2)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(BaseException):
                await self.reader
