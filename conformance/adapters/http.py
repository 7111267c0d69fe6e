"""Streamable HTTP transport (httpx): one POST per message, the answer as JSON or as an SSE stream.

Status lines and headers are part of the evidence. Legacy sessions keep the `Mcp-Session-Id` the
server assigned and DELETE it on close; the 2026-07-28 revision sends no session at all. Redirects are
never followed: the harness talks only to the origin it was given. Bodies are read raw and their
Content-Encoding undone by `decoding.py`, within the message cap as they are decoded.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from conformance.adapters.asyncio_net import async_client
from conformance.adapters.base import (
    FRAMES_PER_REPLY,
    NO_RESPONSE,
    Adapter,
    Headers,
    Reply,
    TargetUnreachable,
    TransportClosed,
    TransportError,
    TransportTimeout,
    TransportTooLarge,
    TransportViolation,
    cause_in_words,
    too_large,
)
from conformance.adapters.decoding import BodyDecoder
from conformance.adapters.sse_parse import SseEvent, SseParser
from conformance.adapters.transcript import Transcript
from conformance.protocol.jsonrpc import Frame, classify

ACCEPT_BOTH = "application/json, text/event-stream"
#: The content types a request may be answered in (Streamable HTTP, every revision).
RESPONSE_MEDIA_TYPES = frozenset({"application/json", "text/event-stream"})
#: Seconds to wait for the end of an SSE stream whose answer has arrived (see `_finish`).
STREAM_TAIL_WAIT = 0.25


class HttpAdapter(Adapter):
    transport = "http"

    def __init__(
        self,
        url: str,
        transcript: Transcript,
        *,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        super().__init__(transcript, max_message_bytes=max_message_bytes)
        self.url = url
        self.base_headers = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_header: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._connected_once = False
        #: httpcore's network backend under the client ("asyncio" unless httpx changed its layout).
        self.network_backend = ""

    def describe(self) -> str:
        return self.url

    async def start(self) -> None:
        self._client, self.network_backend = async_client(max_connections=8, max_keepalive=4, timeout=30.0)

    def _headers(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, **self.base_headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_header:
            headers["MCP-Protocol-Version"] = self.protocol_header
        if extra:
            for key, value in extra.items():
                for existing in [k for k in headers if k.lower() == key.lower()]:
                    del headers[existing]
                if value is not None:
                    headers[key] = value
        return headers

    async def _exchange(self, message: bytes, expect_id: Any, timeout: float, headers: Headers) -> Reply:
        return await self.request("POST", message, expect_id=expect_id, timeout=timeout, headers=headers)

    async def request(
        self,
        method: str,
        body: bytes = b"",
        *,
        expect_id: Any = NO_RESPONSE,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        stream_window: float = 0.0,
    ) -> Reply:
        """One HTTP request. For a GET that opens an event stream, read for `stream_window` seconds."""
        assert self._client is not None, "start() first"
        started = time.monotonic()
        sent_headers = self._headers(headers)
        if method != "POST":
            sent_headers.pop("Content-Type", None)
            if method == "GET":
                sent_headers["Accept"] = "text/event-stream"
        self.transcript.record("send", body, channel=f"{method} {self.url}", headers=sent_headers)
        began: list[Reply] = []  # the answer, once its status line came: a timeout says how far it got
        try:
            async with asyncio.timeout(timeout):
                return await self._do(method, body, sent_headers, expect_id, started, stream_window, began)
        except TimeoutError:
            self.transcript.record("event", note=f"{method} timed out after {timeout:g} s")
            if not began:
                raise TransportTimeout(f"no HTTP status line to {method} within {timeout:g} s") from None
            status = began[0].status
            raise TransportTimeout(
                f"HTTP {status} to {method}, but its body did not end within {timeout:g} s", status=status
            ) from None
        except httpx.ConnectError as exc:
            if not self._connected_once:
                raise TargetUnreachable(
                    f"cannot connect to {self.url}: {cause_in_words(exc, url=self.url)}"
                ) from None
            raise TransportClosed(f"connection to {self.url} failed: {exc}") from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise TransportClosed(f"the connection broke during {method}: {exc!r}") from None
        except httpx.HTTPError as exc:
            raise TransportError(f"HTTP failure during {method}: {exc!r}") from None

    async def _do(
        self,
        method: str,
        body: bytes,
        headers: dict[str, str],
        expect_id: Any,
        started: float,
        stream_window: float,
        began: list[Reply] | None = None,
    ) -> Reply:
        assert self._client is not None
        async with self._client.stream(method, self.url, content=body or None, headers=headers) as resp:
            self._connected_once = True
            reply = Reply(response=None, status=resp.status_code, headers=_lower(resp.headers))
            if began is not None:
                began.append(reply)
            sid = resp.headers.get("mcp-session-id")
            if sid and not self.session_id:
                self.session_id = sid
            self.transcript.record(
                "recv",
                channel=f"HTTP {resp.status_code} {resp.reason_phrase}",
                status=resp.status_code,
                headers=dict(resp.headers),
            )
            if reply.content_type.startswith("text/event-stream"):
                decoder = self._decoder(resp, None)
                await self._read_sse(resp, decoder, reply, expect_id, started, stream_window)
            else:
                data = await self._read_capped(resp, self._decoder(resp, self.max_message_bytes))
                if data.strip():
                    # The body answers the POST it came back on, whatever id it carries (the transport
                    # pairs them; the rows that read it judge the id).
                    self.transcript.record("recv", data, channel="body")
                    frame = classify(data)
                    reply.frames.append(frame)
                    if "oversize" in frame.extra and expect_id is not NO_RESPONSE:
                        raise TransportTooLarge(too_large(frame, self.max_message_bytes))
                    if frame.kind in ("response", "error", "invalid") and expect_id is not NO_RESPONSE:
                        reply.response = frame
        reply.elapsed = time.monotonic() - started
        status = reply.status or 0
        if expect_id is not NO_RESPONSE:
            reply.violation = self._violation(status, reply.content_type)
        if expect_id is not NO_RESPONSE and reply.response is None and not 400 <= status < 500:
            # A 4xx without a JSON-RPC body is a refusal the checks judge (reply.violation says whether
            # its content type was one a request may get); a 5xx, or a 2xx that carries no answer,
            # leaves nothing to judge but the transport rule a 2xx in the wrong content type breaks.
            excerpt = reply.frames[0].raw[:300].decode("utf-8", errors="replace") if reply.frames else ""
            message = f"HTTP {status} ({reply.content_type or 'no content type'}) carried no JSON-RPC answer"
            if reply.violation and status < 500:
                raise TransportViolation(reply.violation, evidence=excerpt)
            raise TransportError(message, evidence=excerpt, status=status or None)
        return reply

    def _violation(self, status: int, content_type: str) -> str:
        """Why this answer to a request breaks Streamable HTTP, or "" (every revision since 2025-03-26:
        a request MUST get Content-Type application/json or text/event-stream).

        Answers the transport or its neighbours define as a refusal of the request itself are not
        judged here: 401 and 403 (authorization, a rejected Origin), 404 for a session that ended, and
        any 5xx (a server failure, ERROR elsewhere)."""
        media = content_type.split(";", 1)[0].strip().lower()
        if media in RESPONSE_MEDIA_TYPES or status >= 500 or status in (401, 403):
            return ""
        if status == 404 and self.session_id:
            return ""
        return (
            f"HTTP {status} answered a JSON-RPC request with "
            f"{('Content-Type ' + content_type) if content_type else 'no Content-Type'}, "
            "not application/json or text/event-stream"
        )

    def _decoder(self, resp: httpx.Response, cap: int | None) -> BodyDecoder:
        """The body's own decoder: Content-Encoding undone by the harness, a JSON body counted against
        the cap as it is decoded (an SSE stream's events are capped one by one by its parser)."""
        try:
            return BodyDecoder(resp.headers.get("content-encoding", ""), cap)
        except TransportError as exc:
            self.transcript.record("event", note=str(exc))
            raise

    async def _read_capped(self, resp: httpx.Response, decoder: BodyDecoder) -> bytes:
        """The decoded body, read raw and decoded here chunk by chunk, never more than the cap. The
        pieces are joined once at the end: a body near the cap is allocated once at its size, not
        grown (and over-allocated) and then copied."""
        pieces: list[bytes] = []
        async for chunk in resp.aiter_raw():
            try:
                pieces.extend(decoder.feed(chunk))
            except TransportError as exc:
                self.transcript.record("event", note=str(exc))
                raise
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def _read_sse(
        self,
        resp: httpx.Response,
        decoder: BodyDecoder,
        reply: Reply,
        expect_id: Any,
        started: float,
        window: float,
    ) -> None:
        parser = SseParser(self.max_message_bytes)
        deadline = started + window if window else None
        stream = resp.aiter_raw()
        while True:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                try:
                    chunk = await asyncio.wait_for(anext(stream), remaining)
                except (TimeoutError, StopAsyncIteration):
                    return
            else:
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    return
            try:
                for piece in decoder.feed(chunk):
                    for event in parser.feed(piece):
                        frame = self._take_event(event, reply, expect_id)
                        if frame is not None and frame is reply.response:
                            await _finish(stream)
                            return
                        if frame is not None and frame.kind == "request" and self.answer_request:
                            await self._post_answer(self.answer_request(frame))
                    # One raw chunk may decode to a flood of events: let the request's timeout in.
                    await asyncio.sleep(0)
            except ValueError as exc:
                self.transcript.record("event", note=str(exc))
                raise TransportTooLarge(str(exc)) from None
            except TransportError as exc:
                self.transcript.record("event", note=str(exc))
                raise

    @contextlib.asynccontextmanager
    async def listen(
        self,
        *,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        answer: bool = False,
    ) -> AsyncIterator[Listening]:
        """A GET to the endpoint (or, with `body`, a POST of that request: 2026-07-28's
        subscriptions/listen, whose answer is a stream that stays open) held open while the caller
        works: `Listening` gathers the events of the stream as they come (each recorded in the
        transcript like any SSE answer's) until the block ends, which closes it. Opening it is bounded
        by `timeout`; a body that is not an event stream is read (within the cap) for the evidence and
        the stream is `ended` at once. With `answer`, a request the server sends on the stream is
        answered (`answer_request`, POSTed), as a client that holds the stream to be asked does."""
        assert self._client is not None, "start() first"
        method = "GET" if body is None else "POST"
        sent = self._headers(headers)
        if body is None:
            sent.pop("Content-Type", None)
            sent.setdefault("Accept", "text/event-stream")
            if sent["Accept"] == ACCEPT_BOTH:
                sent["Accept"] = "text/event-stream"
        self.transcript.record("send", body or b"", channel=f"{method} {self.url}", headers=sent)
        client = self._client
        try:
            async with asyncio.timeout(timeout):
                request = client.build_request(method, self.url, headers=sent, content=body)
                resp = await client.send(request, stream=True)
        except TimeoutError:
            self.transcript.record("event", note=f"{method} timed out after {timeout:g} s")
            raise TransportTimeout(f"no HTTP answer to {method} within {timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise TransportClosed(f"{method} failed: {exc!r}") from None
        pump: asyncio.Task[None] | None = None
        try:
            self.transcript.record(
                "recv",
                channel=f"HTTP {resp.status_code} {resp.reason_phrase}",
                status=resp.status_code,
                headers=dict(resp.headers),
            )
            listening = Listening(resp.status_code, _lower(resp.headers))
            if listening.content_type.startswith("text/event-stream"):
                pump = asyncio.create_task(self._pump(resp, listening, answer))
            else:
                decoder = self._decoder(resp, self.max_message_bytes)
                try:
                    async with asyncio.timeout(timeout):
                        listening.body = await self._read_capped(resp, decoder)
                except (TimeoutError, httpx.HTTPError, TransportError) as exc:
                    listening.error = f"the {method} body could not be read: {exc!r}"
                if listening.body.strip():
                    self.transcript.record("recv", listening.body, channel="body")
                listening.finish()
            yield listening
        finally:
            if pump is not None:
                pump.cancel()
                with contextlib.suppress(BaseException):
                    await pump
            with contextlib.suppress(Exception):
                await resp.aclose()

    async def _pump(self, resp: httpx.Response, listening: Listening, answer: bool = False) -> None:
        """Read a held GET stream into `listening` until it ends, breaks or is cancelled."""
        parser = SseParser(self.max_message_bytes)
        decoder = self._decoder(resp, None)
        scratch = Reply(response=None)
        try:
            async for chunk in resp.aiter_raw():
                for piece in decoder.feed(chunk):
                    for event in parser.feed(piece):
                        frame = self._take_event(event, scratch, NO_RESPONSE)
                        if len(listening.events) < FRAMES_PER_REPLY:
                            listening.add(StreamEvent(event.own_id, frame))
                        if answer and frame is not None and frame.kind == "request" and self.answer_request:
                            # A request the server sends unrelated to any of ours comes here (roots/list
                            # asked on its own): answered as on a POST's stream, or the server waits on.
                            await self._post_answer(self.answer_request(frame))
                await asyncio.sleep(0)
        except (ValueError, TransportError, httpx.HTTPError) as exc:
            self.transcript.record("event", note=f"the held stream broke: {exc!r}")
            listening.error = str(exc)
        finally:
            listening.finish()

    async def _post_answer(self, data: bytes) -> None:
        """POST the answer to a request the server sent on a stream (Streamable HTTP: "The client MUST
        use HTTP POST to send JSON-RPC messages to the MCP endpoint"), on a connection of its own
        while the stream stays open; what the POST drew is recorded, never judged here."""
        assert self._client is not None
        headers = self._headers(None)
        self.transcript.record("send", data, channel=f"POST {self.url}", headers=headers)
        try:
            resp = await self._client.post(self.url, content=data, headers=headers)
        except httpx.HTTPError as exc:
            self.transcript.record("event", note=f"the answer's POST failed: {exc!r}")
            return
        self.transcript.record(
            "recv",
            resp.content[:4096],
            channel=f"HTTP {resp.status_code} {resp.reason_phrase}",
            status=resp.status_code,
        )

    def _take_event(self, event: SseEvent, reply: Reply, expect_id: Any) -> Frame | None:
        """Record one SSE event in `reply`; its frame (the reply's response when it answers the request)."""
        if not event.data:
            if event.own_id is not None and len(reply.event_ids) < FRAMES_PER_REPLY:
                reply.event_ids.append((event.own_id, None))
            return None
        self.transcript.record("recv", event.data, channel=f"sse:{event.event}")
        frame = classify(event.data)
        if event.own_id is not None and len(reply.event_ids) < FRAMES_PER_REPLY:
            reply.event_ids.append((event.own_id, frame))
        if len(reply.frames) < FRAMES_PER_REPLY:
            reply.frames.append(frame)
        else:
            reply.dropped_frames += 1
        if "oversize" in frame.extra and expect_id is not NO_RESPONSE:
            raise TransportTooLarge(too_large(frame, self.max_message_bytes))
        # A reply without an id among a request's events answers no numbered request (a probe, expect_id
        # None, may be answered with id null): the stream goes on to the request's answer.
        answers = expect_id is None or not frame.idless_reply
        if expect_id is not NO_RESPONSE and frame.kind in ("response", "error", "invalid") and answers:
            reply.response = frame
        return frame

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self.session_id:
            with contextlib.suppress(Exception):
                headers = self._headers(None)
                headers.pop("Content-Type", None)
                # The status is all that matters: the body is never read, so never decoded.
                async with client.stream("DELETE", self.url, headers=headers, timeout=2.0) as resp:
                    self.transcript.record(
                        "recv", channel=f"DELETE session: HTTP {resp.status_code}", status=resp.status_code
                    )
        await client.aclose()


@dataclass(slots=True)
class StreamEvent:
    """One event of a held GET stream: the ID its own `id` field set (or None) and its frame (None for
    an event with empty data)."""

    id: str | None
    frame: Frame | None


class Listening:
    """What a held GET stream has carried so far (`HttpAdapter.listen`)."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status = status
        self.headers = headers
        self.events: list[StreamEvent] = []
        self.body = b""
        self.error = ""
        self.ended = False
        self._changed = asyncio.Event()

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def frames(self) -> list[Frame]:
        return [event.frame for event in self.events if event.frame is not None]

    def add(self, event: StreamEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def finish(self) -> None:
        self.ended = True
        self._changed.set()

    async def wait_for(self, done: Callable[[list[StreamEvent]], bool], timeout: float) -> bool:
        """Wait (at most `timeout` seconds) until `done(events)` holds; False if it never did before the
        stream ended or the time ran out."""
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            if done(self.events):
                return True
            remaining = deadline - time.monotonic()
            if self.ended or remaining <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)


async def _finish(stream: AsyncIterator[bytes]) -> None:
    """Read what is left of an answered SSE stream (a conformant server ends it now), so httpx can keep
    the connection for the next request; give up after a moment and let the connection go."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(STREAM_TAIL_WAIT):
            async for _ in stream:
                pass


def _lower(headers: httpx.Headers) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


__all__ = ["Frame", "HttpAdapter", "Listening", "StreamEvent"]
