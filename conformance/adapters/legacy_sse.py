"""The deprecated HTTP+SSE transport of 2024-11-05 (`sse:URL`), which deployed servers still speak.

A GET opens an event stream whose first `endpoint` event names where to POST messages; answers come
back on that stream. The endpoint must stay on the target's origin: the harness never follows a URL
to another host.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from conformance.adapters.asyncio_net import async_client
from conformance.adapters.base import (
    NO_RESPONSE,
    Headers,
    Reply,
    StreamAdapter,
    TargetUnreachable,
    TransportClosed,
    TransportError,
)
from conformance.adapters.decoding import BodyDecoder
from conformance.adapters.sse_parse import SseParser
from conformance.adapters.transcript import Transcript
from conformance.protocol.jsonrpc import classify

ENDPOINT_WAIT = 10.0


class LegacySseAdapter(StreamAdapter):
    transport = "sse"

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
        self.endpoint: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._reader: asyncio.Task[None] | None = None
        self._endpoint_ready = asyncio.Event()

    def describe(self) -> str:
        return "sse:" + self.url

    async def start(self) -> None:
        # One GET stream and one POST at a time: the same client as Streamable HTTP, asyncio backend.
        self._client, _ = async_client(max_connections=8, max_keepalive=4, timeout=30.0)
        self._reader = asyncio.create_task(self._read_stream())
        try:
            await asyncio.wait_for(self._endpoint_ready.wait(), ENDPOINT_WAIT)
        except TimeoutError:
            await self.close()
            raise TargetUnreachable(
                f"no `endpoint` event from {self.url} within {ENDPOINT_WAIT:g} s"
            ) from None
        if self.endpoint is None:
            await self.close()
            raise TargetUnreachable(f"cannot open the SSE stream at {self.url}: {self._closed_reason}")

    async def _read_stream(self) -> None:
        assert self._client is not None
        headers = {"Accept": "text/event-stream", **self.base_headers}
        try:
            async with self._client.stream("GET", self.url, headers=headers, timeout=None) as resp:
                self.transcript.record(
                    "recv",
                    channel=f"GET stream: HTTP {resp.status_code}",
                    status=resp.status_code,
                    headers=dict(resp.headers),
                )
                if resp.status_code != 200:
                    self._stream_ended(f"GET answered HTTP {resp.status_code}")
                    self._endpoint_ready.set()
                    return
                parser = SseParser(self.max_message_bytes)
                # Content-Encoding undone here, piece by piece; each event is capped by the parser.
                decoder = BodyDecoder(resp.headers.get("content-encoding", ""), None)
                async for chunk in resp.aiter_raw():
                    for piece in decoder.feed(chunk):
                        for event in parser.feed(piece):
                            self.transcript.record("recv", event.data, channel=f"sse:{event.event}")
                            if event.event == "endpoint" and self.endpoint is None:
                                self._set_endpoint(event.data.decode("utf-8", errors="replace").strip())
                            elif event.event == "message":
                                await self._enqueue(classify(event.data))
                        await asyncio.sleep(0)  # a chunk may decode to a flood: stay cancellable
            self._stream_ended("the SSE stream ended")
        except (httpx.HTTPError, ValueError) as exc:
            self._stream_ended(f"the SSE stream failed: {exc!r}")
        except TransportError as exc:  # a refused coding, or an SSE line or event over the cap
            self.transcript.record("event", note=str(exc))
            self._stream_ended(f"the SSE stream failed: {exc}")
        finally:
            self._endpoint_ready.set()

    def _set_endpoint(self, value: str) -> None:
        endpoint = urljoin(self.url, value)
        if urlsplit(endpoint)[:2] != urlsplit(self.url)[:2]:
            self.transcript.record("event", note=f"refused endpoint outside the target's origin: {endpoint}")
            self._stream_ended(f"the endpoint event pointed outside the target's origin: {endpoint}")
            self._endpoint_ready.set()
            return
        self.endpoint = endpoint
        self._endpoint_ready.set()

    async def _exchange(self, message: bytes, expect_id: Any, timeout: float, headers: Headers) -> Reply:
        assert self._client is not None and self.endpoint is not None
        started = time.monotonic()
        self.drain_pending()
        sent = {"Content-Type": "application/json", **self.base_headers, **(headers or {})}
        self.transcript.record("send", message, channel=f"POST {self.endpoint}", headers=sent)
        try:
            async with self._client.stream(
                "POST", self.endpoint, content=message, headers=sent, timeout=timeout
            ) as resp:
                content = await self._read_body(resp)
        except httpx.HTTPError as exc:
            raise TransportClosed(f"POST to the SSE endpoint failed: {exc!r}") from None
        self.transcript.record(
            "recv", content, channel=f"POST: HTTP {resp.status_code}", status=resp.status_code
        )
        if resp.status_code >= 400:
            # The POST itself was refused: no answer will come on the stream for this message.
            frame = classify(content) if content.strip() else None
            answered = frame if frame is not None and frame.kind in ("response", "error", "invalid") else None
            return Reply(
                response=answered,
                frames=[frame] if frame else [],
                status=resp.status_code,
                headers={k.lower(): v for k, v in resp.headers.items()},
                elapsed=time.monotonic() - started,
            )
        if expect_id is NO_RESPONSE:
            return Reply(response=None, status=resp.status_code, elapsed=time.monotonic() - started)
        reply = await self._await_response(expect_id, timeout, started)
        reply.status = resp.status_code
        return reply

    async def _read_body(self, resp: httpx.Response) -> bytes:
        """The POST's answer body, decoded here and capped as it is decoded (usually "Accepted")."""
        try:
            decoder = BodyDecoder(resp.headers.get("content-encoding", ""), self.max_message_bytes)
            buf = bytearray()
            async for chunk in resp.aiter_raw():
                for piece in decoder.feed(chunk):
                    buf += piece
        except TransportError as exc:
            self.transcript.record("recv", channel=f"POST: HTTP {resp.status_code}", status=resp.status_code)
            self.transcript.record("event", note=str(exc))
            raise
        return bytes(buf)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None
