"""A scenario: the MCP server a client under test meets, as a pack scripts it.

A pack subclasses `Scenario` (through `conformance.pack_api`), names it after the official contract's
scenario (`name`: what the client reads from `MCP_CONFORMANCE_SCENARIO`), says which revisions and
transports it is played at, what it offers (`capabilities`, `tools`) and how it answers (`answer`,
`call_tool`, `on_get`); the transports (`serve.py`) carry the bytes. A script may ask the client
something back while it answers (`Peer.ask`: elicitation, sampling) or shape the stream itself
(`Peer.event`, `Peer.close`: a retry field, a stream closed early).

The base class answers what every scenario answers alike: `initialize` (answered with the revision the
scenario plays, whatever the client offered), `server/discover` (2026-07-28), `ping`, `tools/list`,
and method-not-found.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from conformance import __version__
from conformance.clients.wire import Arrival, Message, Recording
from conformance.protocol import jsonrpc
from conformance.protocol.versions import LEGACY_REVISIONS, MODERN_REVISIONS, era_of

#: How long the scenario server waits for the client's answer to a request of its own.
ASK_TIMEOUT = 10.0
#: JSON-RPC's method-not-found code.
METHOD_NOT_FOUND = -32601
#: The 2026-07-28 methods whose result is a `CacheableResult`: the schema requires `ttlMs` and
#: `cacheScope` in each, and a strict client rejects a listing without them.
CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
    | {"resources/read"}
)
#: What the scenario server says of caching: stale at once, and never shared across authorizations.
NO_CACHE = {"ttlMs": 0, "cacheScope": "private"}


@dataclass(frozen=True)
class Refusal:
    """An error answer: its JSON-RPC error, and the HTTP status it goes with over HTTP."""

    code: int
    message: str
    data: Any = None
    status: int = 200

    def error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


#: What `answer` returns when it wrote (or will write) the answer itself, or leaves the request open.
NO_ANSWER: Any = object()


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer of the scenario's own, before MCP's transport reads the request (`on_http`): a
    document the scenario serves, a 401 with `WWW-Authenticate`, an authorization server's endpoint."""

    status: int
    headers: Mapping[str, str]
    body: bytes = b""


class Peer:
    """The way back to the client for one request: a transport's channel (an SSE stream of a POST's
    answer, the legacy SSE stream, stdout of the relay). `ask` sends a request of the server's and waits
    for the client's answer, whichever way it comes back."""

    def __init__(self, session: ScenarioSession) -> None:
        self.session = session

    async def send(self, message: Any) -> None:  # pragma: no cover - every transport overrides it
        raise NotImplementedError

    async def event(self, raw: bytes) -> None:
        """Write raw event-stream bytes (a retry field, a priming event): only streams have them."""
        raise RuntimeError("this transport has no event stream")

    async def close(self) -> None:
        """End this channel without an answer (a stream closed early)."""

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send the client a request and return its answer (the whole JSON-RPC message)."""
        msg_id = f"s-{next(self.session.ids)}"
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.session.pending[msg_id] = waiter
        await self.send(jsonrpc.request(msg_id, method, params))
        try:
            return await asyncio.wait_for(waiter, ASK_TIMEOUT)
        finally:
            self.session.pending.pop(msg_id, None)


class Scenario:
    """One official client scenario as the harness plays it (subclass per scenario)."""

    #: The official contract's scenario name (`MCP_CONFORMANCE_SCENARIO`).
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: The revisions it is played at, and the transports.
    revisions: ClassVar[tuple[str, ...]] = LEGACY_REVISIONS + MODERN_REVISIONS
    transports: ClassVar[tuple[str, ...]] = ("http", "sse", "stdio")
    #: `MCP_CONFORMANCE_CONTEXT` (without `name`, which the harness adds), when the scenario has any.
    context: ClassVar[Mapping[str, Any] | None] = None
    capabilities: ClassVar[Mapping[str, Any]] = {"tools": {}}
    tools: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    #: The official `allowClientError`: the scenario ends in an error the client is right to give up on
    #: (a scope that can never be granted, an authorization response it must reject), so a non-zero
    #: exit is no contract failure.
    allow_client_error: ClassVar[bool] = False
    #: A scenario of an extension or an experimental feature (the official suite's `not_scored`): every
    #: case it plays, the contract's and the hygiene rows' too, is that track's, and fails no run unless
    #: the run claims it (`client --experimental`); a client that does not implement an OAuth extension
    #: is not failed by the scenario that plays it. None: the scenario counts.
    unscored_track: ClassVar[str | None] = None

    def __init__(self, revision: str, transport: str, recording: Recording) -> None:
        self.revision = revision
        self.transport = transport
        self.recording = recording
        self.era = era_of(revision)

    def may_give_up(self) -> str:
        """Why a non-zero exit is no failure of the contract (the contract case then PASSes with this
        note), or "": the official `allowClientError`, or, in a script that overrides this, an answer
        it broke on purpose that the client may refuse, or an end of the session a row judges."""
        return "the scenario ends in an error the client may give up on" if self.allow_client_error else ""

    def server_info(self) -> dict[str, Any]:
        return {"name": f"mcp-conformance-{self.name}", "version": __version__}

    async def answer(self, message: Message, peer: Peer) -> Any:
        """The result of a client's request, a `Refusal`, or `NO_ANSWER`."""
        method, params = message.method, message.params if isinstance(message.params, dict) else {}
        if method == "initialize" and self.era == "legacy":
            # The scenario's server supports only the revision it plays: "If the server supports the
            # requested protocol version, it MUST respond with the same version. Otherwise, the server
            # MUST respond with another protocol version it supports." Any other offer gets that one.
            self.recording.facts["protocol_version"] = self.revision  # the negotiated version
            self.recording.facts["protocol_offered"] = params.get("protocolVersion")
            return {
                "protocolVersion": self.revision,
                "capabilities": dict(self.capabilities),
                "serverInfo": self.server_info(),
            }
        if method == "server/discover" and self.era == "modern":
            return {
                "supportedVersions": [self.revision],
                "capabilities": dict(self.capabilities),
                "serverInfo": self.server_info(),
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [dict(tool) for tool in self.tools]}
        if method == "tools/call":
            return await self.call_tool(str(params.get("name")), params.get("arguments") or {}, message, peer)
        return Refusal(METHOD_NOT_FOUND, f"method not found: {method}")

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        """The result of `tools/call` of tool `name` (override per scenario). At 2026-07-28 a result
        is sent with `resultType: "complete"` unless it says otherwise (None: without one)."""
        return Refusal(-32602, f"unknown tool: {name}")

    async def on_http(self, arrival: Arrival) -> HttpAnswer | None:
        """Any HTTP request, before the MCP transport reads it: an answer of the scenario's own, or
        None (the default) to let the transport handle it. Where authorization scenarios serve their
        metadata and endpoints, and refuse an MCP request without a token."""
        return None

    async def on_get(self, peer: Peer) -> bool:
        """A Streamable HTTP GET (the client's stream for the server's messages): True when the
        scenario serves it on `peer` (a stream), False for 405."""
        return False


class ScenarioSession:
    """One scenario played once: the script, the recording, the server's requests awaiting answers."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.recording = scenario.recording
        self.pending: dict[str, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        #: Set when the client sent anything at all.
        self.connected = asyncio.Event()

    def take_answer(self, message: Message) -> bool:
        """Route a client's answer to the server request waiting for it; False if none waits."""
        msg_id = message.value.get("id") if isinstance(message.value, dict) else None
        waiter = self.pending.get(msg_id) if isinstance(msg_id, str) else None
        if waiter is None or waiter.done():
            return False
        waiter.set_result(message.value)
        return True

    async def reply_to(self, message: Message, peer: Peer) -> tuple[dict[str, Any] | None, int]:
        """The JSON-RPC answer to a request (None when the script answers it itself or not at all) and
        the HTTP status it goes with."""
        try:
            outcome = await self.scenario.answer(message, peer)
        except TimeoutError:
            outcome = Refusal(-32603, "the client did not answer the server's request in time")
        if outcome is NO_ANSWER:
            return None, 200
        msg_id = message.value.get("id")
        if isinstance(outcome, Refusal):
            return {"jsonrpc": "2.0", "id": msg_id, "error": outcome.error()}, outcome.status
        if self.scenario.era == "modern" and isinstance(outcome, dict):
            # 2026-07-28: "Servers implementing this protocol version MUST include this field." A
            # script that sets it to None sends a result without it (an earlier revision's server).
            outcome = {"resultType": "complete", **outcome}
            if outcome["resultType"] is None:
                del outcome["resultType"]
            elif outcome["resultType"] == "complete" and message.method in CACHEABLE:
                outcome = {**NO_CACHE, **outcome}  # a script that says how to cache wins
        return {"jsonrpc": "2.0", "id": msg_id, "result": outcome}, 200
