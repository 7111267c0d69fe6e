"""The scenario server's transports: Streamable HTTP (stateful with the initialize handshake, or the
2026-07-28 stateless envelope), legacy HTTP+SSE (2024-11-05) and stdio (through the relay the client
starts). Each turns what arrives into `Message`s for the session and writes its answers back; none of
them judges anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from conformance.clients.httpd import HttpServer, Request, Response
from conformance.clients.scenario import Peer, ScenarioSession
from conformance.clients.wire import Arrival, Message
from conformance.protocol import jsonrpc

JSON = {"Content-Type": "application/json"}


def sse_bytes(message: Any, event_id: str | None = None) -> bytes:
    """One `message` event of an event stream."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: message\ndata: ".encode() + jsonrpc.encode(message) + b"\n\n"


class StreamPeer(Peer):
    """The way back over an HTTP answer: JSON while nothing else was sent, an event stream once the
    script sends anything before its answer (a request of its own, an event)."""

    def __init__(self, session: ScenarioSession, response: Response, headers: dict[str, str]) -> None:
        super().__init__(session)
        self.response = response
        self.headers = headers

    async def event(self, raw: bytes) -> None:
        await self.response.start_stream(self.headers)
        self.session.recording.answered(raw, channel="event-stream")
        await self.response.write(raw)

    async def send(self, message: Any) -> None:
        await self.event(sse_bytes(message))

    async def close(self) -> None:
        self.session.recording.event("the scenario server closed the stream")
        await self.response.end()

    async def finish(self, reply: dict[str, Any] | None, status: int) -> None:
        """The request's answer: as JSON, or the stream's last event (then the stream ends)."""
        if reply is None:
            return
        if self.response.streaming:
            await self.send(reply)
            await self.response.end()
            return
        body = jsonrpc.encode(reply)
        headers = {**JSON, **self.headers}
        self.session.recording.answered(body, channel="answer", status=status, headers=headers)
        await self.response.send(status, headers, body)


async def _take(session: ScenarioSession, request: Request) -> tuple[Arrival, list[Message]]:
    arrival = session.recording.arrived(request.method, request.path, request.headers, request.body)
    session.connected.set()
    return arrival, [Message(frame.value, arrival) for frame in arrival.frames()]


async def _own_answer(session: ScenarioSession, arrival: Arrival, response: Response) -> bool:
    """Whether the scenario answered the request itself (`Scenario.on_http`), which is then sent."""
    own = await session.scenario.on_http(arrival)
    if own is None:
        return False
    session.recording.answered(own.body, channel="answer", status=own.status, headers=dict(own.headers))
    await response.send(own.status, dict(own.headers), own.body)
    return True


async def _accepted(session: ScenarioSession, response: Response, headers: dict[str, str]) -> None:
    session.recording.answered(b"", channel="answer", status=202)
    await response.send(202, headers)


class StreamableHttp:
    """Streamable HTTP at `/mcp`: a session ID is given with the initialize answer (stateful revisions)."""

    def __init__(self, session: ScenarioSession) -> None:
        self.session = session
        self.stateful = session.scenario.era == "legacy"
        self.session_id = uuid.uuid4().hex if self.stateful else ""
        session.recording.facts["session_id"] = self.session_id or None

    def _headers(self) -> dict[str, str]:
        return {"Mcp-Session-Id": self.session_id} if self.session_id else {}

    async def handle(self, request: Request, response: Response) -> None:
        session = self.session
        _arrival, messages = await _take(session, request)
        if request.method == "GET":
            peer = StreamPeer(session, response, self._headers())
            if not await session.scenario.on_get(peer):
                await response.send(405, {"Allow": "POST"})
            return
        if request.method != "POST":
            await response.send(405 if not self.stateful else 200, {"Allow": "GET, POST, DELETE"})
            return
        requests = [m for m in messages if m.is_request]
        for message in messages:
            if not message.is_request:
                session.take_answer(message)
        if not requests:
            await _accepted(session, response, self._headers())
            return
        peer = StreamPeer(session, response, self._headers())
        reply, status = await session.reply_to(requests[0], peer)
        await peer.finish(reply, status)


class LegacySse:
    """HTTP+SSE (2024-11-05): GET `/sse` opens the stream whose first event names the POST endpoint;
    every answer travels on that stream, each POST is accepted with 202."""

    def __init__(self, session: ScenarioSession) -> None:
        self.session = session
        self.stream: StreamPeer | None = None
        self.opened = asyncio.Event()
        self.done = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()

    async def handle(self, request: Request, response: Response) -> None:
        session = self.session
        _arrival, messages = await _take(session, request)
        if request.method == "GET" and self.stream is None:
            self.stream = StreamPeer(session, response, {})
            await self.stream.event(
                f"event: endpoint\ndata: /messages?session_id={uuid.uuid4().hex}\n\n".encode()
            )
            self.opened.set()
            await self.done.wait()
            return
        if request.method != "POST" or self.stream is None:
            await response.send(405 if request.method != "POST" else 400, {})
            return
        await _accepted(session, response, {})
        for message in messages:
            if message.is_request:
                task = asyncio.create_task(self._answer(message, self.stream))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            else:
                session.take_answer(message)

    async def _answer(self, message: Message, stream: StreamPeer) -> None:
        reply, _ = await self.session.reply_to(message, stream)
        if reply is not None:
            await stream.send(reply)


class LinePeer(Peer):
    """The way back over stdio: one line on the relay's connection per message."""

    def __init__(self, session: ScenarioSession, writer: asyncio.StreamWriter) -> None:
        super().__init__(session)
        self.writer = writer

    async def send(self, message: Any) -> None:
        data = jsonrpc.encode(message) + b"\n"
        self.session.recording.answered(data, channel="stdout")
        self.writer.write(data)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()


class StdioRelay:
    """stdio: the relay the client starts connects here; each line it forwards is a message."""

    def __init__(self, session: ScenarioSession) -> None:
        self.session = session
        self.tasks: set[asyncio.Task[None]] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = LinePeer(self.session, writer)
        while True:
            try:
                line = await reader.readline()
            except ConnectionResetError:
                # the relay resets the connection when signalled before its stdin closed (relay.py)
                self.session.recording.event("the client signalled the server before closing its stdin")
                self.session.recording.mark("signalled-before-stdin-closed")
                return
            except (ConnectionError, ValueError):
                return
            if not line:
                self.session.recording.event("the client closed the server's stdin")
                self.session.recording.mark("stdin-closed")
                with contextlib.suppress(ConnectionError, OSError):
                    writer.close()
                return
            if not line.strip():
                continue
            arrival = self.session.recording.arrived("LINE", "", [], line.rstrip(b"\r\n"))
            self.session.connected.set()
            for frame in arrival.frames():
                message = Message(frame.value, arrival)
                if message.is_request:
                    task = asyncio.create_task(self._answer(message, peer))
                    self.tasks.add(task)
                    task.add_done_callback(self.tasks.discard)
                else:
                    self.session.take_answer(message)

    async def _answer(self, message: Message, peer: LinePeer) -> None:
        reply, _ = await self.session.reply_to(message, peer)
        if reply is not None:
            await peer.send(reply)


class Served:
    """A scenario session served on one transport: `address` is what the client is given."""

    def __init__(self, session: ScenarioSession, transport: str) -> None:
        self.session = session
        self.transport = transport
        self.http: HttpServer | None = None
        self.relay: asyncio.Server | None = None
        self.legacy: LegacySse | None = None
        self.port = 0

    async def start(self) -> None:
        if self.transport == "stdio":
            relay = StdioRelay(self.session)
            self.relay = await asyncio.start_server(relay.handle, "127.0.0.1", 0, limit=8 * 1024 * 1024)
            self.port = int(self.relay.sockets[0].getsockname()[1])
            return
        if self.transport == "sse":
            self.legacy = LegacySse(self.session)
            self.http = HttpServer(self.legacy.handle)
        else:
            self.http = HttpServer(StreamableHttp(self.session).handle)
        self.port = await self.http.start()
        # Where the scenario's own documents are (a schema a $ref names): its server's origin.
        self.session.recording.facts["origin"] = f"http://127.0.0.1:{self.port}"

    def url(self) -> str:
        path = "/sse" if self.transport == "sse" else "/mcp"
        return f"http://127.0.0.1:{self.port}{path}"

    async def close(self) -> None:
        if self.legacy is not None:
            self.legacy.done.set()
        if self.http is not None:
            await self.http.close()
        if self.relay is not None:
            self.relay.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.relay.wait_closed(), 2)
