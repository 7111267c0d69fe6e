"""A protocol session over one adapter: request ids, the legacy handshake or the 2026-07-28 envelope.

The session shapes requests the way a revision wants them and hands back exactly what arrived. It
never validates results: that is what checks are for. `Call` bundles the request sent and the reply.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from conformance import __version__
from conformance.adapters.base import NO_RESPONSE, Adapter, Reply
from conformance.protocol import jsonrpc
from conformance.protocol.versions import (
    FIRST_PROTOCOL_HEADER,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    at_least,
    era_of,
    is_known,
)

CLIENT_INFO = {"name": "mcp-conformance", "version": __version__}
#: Methods whose name-like parameter is mirrored in the `Mcp-Name` header (2026-07-28 over HTTP).
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass
class Call:
    """One request and what came back for it."""

    request: dict[str, Any] | None
    reply: Reply
    sent: bytes = b""

    @property
    def response(self) -> Any:
        frame = self.reply.response
        return frame.value if frame is not None else None

    @property
    def result(self) -> Any:
        value = self.response
        return value.get("result") if isinstance(value, dict) else None

    @property
    def error(self) -> Any:
        value = self.response
        return value.get("error") if isinstance(value, dict) else None

    @property
    def error_code(self) -> Any:
        error = self.error
        return error.get("code") if isinstance(error, dict) else None

    def excerpt(self, limit: int = 1500) -> dict[str, Any]:
        """Request and response as evidence for a report, the response cut to `limit` characters."""
        frame = self.reply.response
        text = frame.text if frame is not None else "(no response)"
        out: dict[str, Any] = {
            "request": self.sent.decode("utf-8", errors="replace")[:limit],
            "response": text[:limit] + ("…" if len(text) > limit else ""),
        }
        if self.reply.status is not None:
            out["http_status"] = self.reply.status
        return out


@dataclass
class ServerIdentity:
    """What the server said about itself when the session opened."""

    revision: str
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    opening: Call | None = None

    def has(self, capability: str) -> bool:
        return isinstance(self.capabilities.get(capability), dict)


class HandshakeFailed(Exception):
    """The server did not accept this revision; carries the call as evidence.

    `offered` is the revision string a server counter-offered in its initialize result. That is
    version negotiation working as the lifecycle requires ("the server MUST respond with another
    protocol version it supports"): the asked revision is not spoken, and nothing failed.
    """

    def __init__(self, message: str, call: Call | None = None, offered: str | None = None) -> None:
        super().__init__(message)
        self.call = call
        self.offered = offered


class Session:
    def __init__(
        self, adapter: Adapter, revision: str, *, timeout: float, opening_timeout: float | None = None
    ) -> None:
        self.adapter = adapter
        self.revision = revision
        self.era = era_of(revision)
        self.timeout = timeout
        #: The first request's bound: a server started just now may take its start budget to answer
        #: it (a cold `npx` or `uvx`), while every later request waits the per-request `timeout`.
        self.opening_timeout = opening_timeout
        self._ids = itertools.count(1)
        self.identity = ServerIdentity(revision)
        if self.era == "modern":
            self._set_protocol_header(revision)

    def _set_protocol_header(self, value: str | None) -> None:
        if hasattr(self.adapter, "protocol_header"):
            self.adapter.protocol_header = value

    def next_id(self) -> int:
        return next(self._ids)

    def meta(self) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: self.revision,
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: CLIENT_INFO,
        }

    def headers_for(self, method: str, params: dict[str, Any] | None) -> dict[str, str]:
        """The per-request HTTP headers 2026-07-28 asks for; empty for the legacy era."""
        if self.era != "modern":
            return {}
        headers = {"Mcp-Method": method}
        key = NAME_PARAMS.get(method)
        if key and params and isinstance(params.get(key), str):
            headers["Mcp-Name"] = params[key]
        return headers

    async def open(self) -> ServerIdentity:
        """Legacy: initialize + notifications/initialized. Modern: server/discover. Raise HandshakeFailed."""
        if self.era == "legacy":
            call = await self.request(
                "initialize",
                {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": CLIENT_INFO},
                envelope=False,
            )
            result = call.result
            if not isinstance(result, dict):
                raise HandshakeFailed(f"initialize({self.revision}) was not answered with a result", call)
            offered = result.get("protocolVersion")
            if isinstance(offered, str) and offered != self.revision:
                known = "a revision this harness knows" if is_known(offered) else "unknown to this harness"
                raise HandshakeFailed(
                    f"not spoken: asked for {self.revision}, the server counter-offered {offered!r} "
                    f"({known})",
                    call,
                    offered=offered,
                )
            if offered != self.revision:
                raise HandshakeFailed(
                    f"asked for {self.revision}, the server answered protocolVersion {offered!r}, "
                    "not a version string",
                    call,
                )
            if at_least(self.revision, FIRST_PROTOCOL_HEADER):
                # The MCP-Protocol-Version header exists from 2025-06-18 on; older revisions send none.
                self._set_protocol_header(self.revision)
            await self.notify("notifications/initialized")
        else:
            call = await self.request("server/discover")
            result = call.result
            if not isinstance(result, dict):
                raise HandshakeFailed("server/discover was not answered with a result", call)
            supported = result.get("supportedVersions")
            if not isinstance(supported, list) or self.revision not in supported:
                raise HandshakeFailed(f"server/discover does not list {self.revision}: {supported!r}", call)
        self.identity = ServerIdentity(
            self.revision,
            server_info=_dict(result.get("serverInfo")) or _server_info_from_meta(result),
            capabilities=_dict(result.get("capabilities")),
            opening=call,
        )
        return self.identity

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        envelope: bool = True,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        msg_id: Any = None,
    ) -> Call:
        """Send a request shaped for this session's revision and wait (bounded) for its answer."""
        params = dict(params) if params is not None else None
        if self.era == "modern" and envelope:
            params = params or {}
            params["_meta"] = {**self.meta(), **_dict(params.get("_meta"))}
        message = jsonrpc.request(self.next_id() if msg_id is None else msg_id, method, params)
        merged = {**self.headers_for(method, params), **(headers or {})}
        return await self.send(message, expect_id=message["id"], timeout=timeout, headers=merged)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> Call:
        message = jsonrpc.notification(method, params)
        return await self.send(message, expect_id=NO_RESPONSE, headers=self.headers_for(method, params))

    async def send(
        self,
        message: Any,
        *,
        expect_id: Any,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Call:
        """Send a message (or exact `raw` bytes) and return the call; the building block of probes."""
        data = raw if raw is not None else jsonrpc.encode(message)
        if timeout is None:
            timeout = self.opening_timeout or self.timeout
        self.opening_timeout = None
        reply = await self.adapter.exchange(data, expect_id=expect_id, timeout=timeout, headers=headers)
        return Call(message if isinstance(message, dict) else None, reply, data)

    async def close(self) -> None:
        await self.adapter.close()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _server_info_from_meta(result: dict[str, Any]) -> dict[str, Any]:
    meta = _dict(result.get("_meta"))
    return _dict(meta.get("io.modelcontextprotocol/serverInfo"))
