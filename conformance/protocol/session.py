"""A protocol session over one adapter: request ids, the legacy handshake or the 2026-07-28 envelope.

The session shapes requests the way a revision wants them and hands back exactly what arrived. It
never validates results: that is what checks are for. `Call` bundles the request sent and the reply.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from conformance import __version__
from conformance.adapters.base import (
    NO_RESPONSE,
    Adapter,
    Reply,
    StreamAdapter,
    TargetUnreachable,
    TransportError,
    TransportTimeout,
)
from conformance.protocol import jsonrpc
from conformance.protocol.client_input import ClientInput
from conformance.protocol.jsonrpc import Frame
from conformance.protocol.versions import (
    CLIENT_NAME,
    FIRST_PROTOCOL_HEADER,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    at_least,
    era_of,
    initialize_params,
    is_known,
)
from conformance.text import bytes_text

CLIENT_INFO = {"name": CLIENT_NAME, "version": __version__}
#: Methods whose name-like parameter is mirrored in the `Mcp-Name` header (2026-07-28 over HTTP).
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The 2026-07-28 tasks extension (SEP-2663) names the task the same way: a server that serves it
    # refuses a tasks/* request whose Mcp-Name header is absent (-32020), whoever sends it.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
#: The request a server of each era must answer (ping: "The receiver MUST respond promptly"; 2026-07-28
#: has no ping, and "Servers MUST implement server/discover"), sent right after a probe to settle it.
SENTINEL_METHODS = {"legacy": "ping", "modern": "server/discover"}
#: After the sentinel's answer, how long a probe's answer may still arrive from a server that answers
#: concurrently: three times the sentinel's round trip (a loaded machine stretches both alike), within
#: bounds. A server that answers in order has answered the probe before the sentinel, so on an idle
#: machine an ignored probe costs about 15 ms, not a fixed wait.
PROBE_GRACE_FACTOR = 3.0
PROBE_GRACE_MIN = 0.01
PROBE_GRACE_MAX = 1.0


def probe_grace(round_trip: float) -> float:
    """The grace after a sentinel answered in `round_trip` seconds: it scales with the machine's pace."""
    return min(PROBE_GRACE_MAX, max(PROBE_GRACE_MIN, PROBE_GRACE_FACTOR * round_trip))


class Exchange(TypedDict, total=False):
    """One request and what answered it, as a report's evidence shows it (`Call.excerpt()`): the
    common part of every check's evidence (`conformance.engine.checks.Evidence`)."""

    #: The request sent, cut to a limit (text; bytes shown with escapes).
    request: str
    #: The JSON-RPC answer, cut to a limit, or "(no response)".
    response: str
    #: The HTTP status of the answer (Streamable HTTP and SSE transports).
    http_status: int
    #: The content type of an HTTP answer that carried no JSON-RPC message.
    content_type: str
    #: The start of such an answer's body.
    body: str


@dataclass
class Silence:
    """Seconds spent in exchanges that ended without the answer they waited for, in this process.

    Why one tally per process: sessions are opened in many places (pools, revision probes, races), and
    a benchmark wants what a whole run spent waiting for answers that never came (`bench/`).
    """

    seconds: float = 0.0
    exchanges: int = 0

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        self.exchanges += 1


UNANSWERED = Silence()


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

    def excerpt(self, limit: int = 1500) -> Exchange:
        """Request and response as evidence for a report, the response cut to `limit` characters; with
        no JSON-RPC answer, what came instead (an HTTP answer's content type and body)."""
        frame = self.reply.response
        out: Exchange = {
            "request": _head(self.sent, limit, more=""),
            "response": _head(frame.raw, limit) if frame is not None else "(no response)",
        }
        if self.reply.status is not None:
            out["http_status"] = self.reply.status
        if frame is None and self.reply.status is not None:
            out["content_type"] = self.reply.content_type or "(none)"
            if self.reply.frames:
                out["body"] = bytes_text(self.reply.frames[0].raw, limit)
        return out

    def drew(self) -> str:
        """What the request drew, in the few words a message holds: `error -32602`, `a result`, an error
        whose code is no integer (its JSON), or what came instead of a JSON-RPC answer (`no_answer`)."""
        value = self.response
        if self.reply.response is None or not isinstance(value, dict):
            return self.no_answer()
        if isinstance(value.get("error"), dict):
            code = self.error_code
            if isinstance(code, int) and not isinstance(code, bool):
                return f"error {code}"
            return (
                f"an error whose code is {json.dumps(code)}"
                if "code" in value["error"]
                else "an error without a code"
            )
        if "result" in value:
            return "a result"
        return "an answer with neither a result nor an error object"

    def no_answer(self, limit: int = 120) -> str:
        """What came back for a request that drew no JSON-RPC answer, as a message says it: the HTTP
        status, content type and the start of the body, never "a result" nor a Python repr."""
        reply = self.reply
        if reply.status is None:
            return "no JSON-RPC answer"
        body = f", body `{bytes_text(reply.frames[0].raw, limit)}`" if reply.frames else ", no body"
        return f"HTTP {reply.status} ({reply.content_type or 'no content type'}) and no JSON-RPC answer{body}"


@dataclass
class Probe:
    """A message that may draw no answer (`Session.probe`), what it drew, and what settled it."""

    call: Call
    #: The request sent after it that the server must answer; its answer settled the probe's silence.
    sentinel: Call | None = None
    #: The target ended its stream instead (stdio: it exited), with the exit status and stderr tail.
    closed: str = ""
    #: Over Streamable HTTP: why the POST carried no JSON-RPC answer (the adapter's words).
    failure: str = ""

    @property
    def answered(self) -> bool:
        return self.call.reply.response is not None


@dataclass
class ServerIdentity:
    """What the server said about itself when the session opened."""

    revision: str
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    opening: Call | None = None

    def has(self, capability: str) -> bool:
        return isinstance(self.capabilities.get(capability), dict)


class NotSent(TransportTimeout):
    """A request the session did not send, because its method already broke a session of this revision
    the same way twice (hung, say): it is judged as the failure it would have been (`HangWatch`), at
    once. Nothing reached the server, so the session is not broken by it."""

    def __init__(self, message: str, *, evidence: str = "", status: int | None = None) -> None:
        super().__init__(message, evidence=evidence, status=status)
        self.sent = False


class ProbeUnanswered(TransportTimeout):
    """On a stream (stdio, HTTP+SSE): neither a probe nor the sentinel request sent right after it was
    answered within the request timeout, and the target did not end its stream (`Session.probe`).

    A check that sent the probe for its own rule may judge this silence (a server gone deaf after a
    line that is not a message); uncaught it is an ERROR, as any timeout. `probe` is what was sent
    and what came back (nothing answering either), `waited` the seconds spent."""

    def __init__(self, message: str, *, evidence: str = "", probe: Probe, waited: float) -> None:
        super().__init__(message, evidence=evidence)
        self.probe = probe
        self.waited = waited


class HangWatch(Protocol):
    """Remembers which requests broke their session (timed out unanswered, answered past the message cap,
    lost the server) and refuses to send them again past a bound."""

    def before(self, method: str, params: dict[str, Any] | None) -> None:
        """Raise NotSent when this request may not be sent any more."""

    def answered(self, method: str) -> None:
        """A request of `method` was answered."""

    def failed(self, method: str, error: TransportError, first: bool, params: dict[str, Any] | None) -> None:
        """A request of `method` (with `params`) broke its session with `error` (a timeout only when it
        waited its whole per-request budget); `first`: it was the first message the session sent after
        its opening."""


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
        #: Messages sent since the opening (requests, notifications, raw probes): whether a request that
        #: broke the session was its first (`HangWatch.failed`).
        self.messages_sent = 0
        self.identity = ServerIdentity(revision)
        #: Set by the engine: requests of a method that hung too often in this revision are not sent.
        self.hangs: HangWatch | None = None
        #: What this client declares and answers when the server asks for input, and every ask seen:
        #: declared nothing unless a check sets `client.capabilities` before `open()`.
        self.client = ClientInput(modern=self.era == "modern")
        adapter.answer_request = self.client.answer_frame
        if self.era == "modern":
            self._set_protocol_header(revision)

    def _set_protocol_header(self, value: str | None) -> None:
        if hasattr(self.adapter, "protocol_header"):
            self.adapter.protocol_header = value

    def unawaited(self, *ids: Any) -> None:
        """Requests written with `NO_RESPONSE` whose answers are still to come (an early ping): on a
        stream each is stale when it comes, among a later reply's frames, never taken for that reply
        (`StreamAdapter.unawaited`). Over HTTP each POST carries its own answer: nothing to do."""
        if hasattr(self.adapter, "unawaited"):
            self.adapter.unawaited(*ids)

    def answer_to(self, msg_id: Any) -> Frame | None:
        """The server's answer to the request of id `msg_id` written with `NO_RESPONSE` (`unawaited`),
        when the adapter read one, whichever wait or drain read it (`StreamAdapter.answer_to`). Over
        HTTP each POST carries its own answer, in that call's reply: None."""
        if isinstance(self.adapter, StreamAdapter):
            return self.adapter.answer_to(msg_id)
        return None

    async def answer_waiting(self) -> int:
        """Answer the server's requests that came while this session was idle (`StreamAdapter.answer_waiting`;
        over HTTP they come on a stream a request holds open, so there is nothing waiting)."""
        if hasattr(self.adapter, "answer_waiting"):
            return int(await self.adapter.answer_waiting(self.timeout))
        return 0

    def next_id(self) -> int:
        return next(self._ids)

    def meta(self) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: self.revision,
            META_CLIENT_CAPABILITIES: self.client.capabilities,
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
        """Legacy: initialize + notifications/initialized. Modern: server/discover. Raise HandshakeFailed.

        An answer with a result is the server speaking the revision, whatever that result's shape: a
        missing field (no `protocolVersion`, no `supportedVersions`) or another malformed one is for the
        shape rows to judge (BASE-LIFE-002, BASE-DISC-001), never read as the revision not being spoken.
        Only an error, no result, or a result that names another revision in this one's place (a
        counter-offer, a `protocolVersion` that is no string, a `supportedVersions` listing others and
        not this one) says the revision is not spoken.
        """
        if self.era == "legacy":
            params = initialize_params(self.revision, self.client.capabilities, __version__)
            call = await self.request("initialize", params, envelope=False)
            answered, result = result_of(call)
            if not answered:
                raise HandshakeFailed(f"initialize({self.revision}) was not answered with a result", call)
            offered = _dict(result).get("protocolVersion")
            if isinstance(offered, str) and offered != self.revision:
                known = "a revision this harness knows" if is_known(offered) else "unknown to this harness"
                raise HandshakeFailed(
                    f"not spoken: asked for {self.revision}, the server counter-offered {offered!r} "
                    f"({known})",
                    call,
                    offered=offered,
                )
            if offered is not None and not isinstance(offered, str):
                # A value in its place that is no string (20250326) names some revision, garbled: which
                # one is unknown, so this one is not shown to be spoken. Absent, it names none: spoken.
                raise HandshakeFailed(
                    f"asked for {self.revision}, the server answered protocolVersion {json_text(offered)}, "
                    "not a version string",
                    call,
                )
            if at_least(self.revision, FIRST_PROTOCOL_HEADER):
                # The MCP-Protocol-Version header exists from 2025-06-18 on; older revisions send none.
                self._set_protocol_header(self.revision)
            await self.notify("notifications/initialized")
        else:
            call = await self.request("server/discover")
            answered, result = result_of(call)
            if not answered:
                raise HandshakeFailed("server/discover was not answered with a result", call)
            supported = _dict(result).get("supportedVersions")
            named = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
            if named and self.revision not in named:
                raise HandshakeFailed(
                    f"not spoken: server/discover lists {', '.join(named)} in supportedVersions, not "
                    f"{self.revision}",
                    call,
                )
        self.messages_sent = 0  # what follows the opening
        body = _dict(result)
        self.identity = ServerIdentity(
            self.revision,
            server_info=_dict(body.get("serverInfo")) or _server_info_from_meta(body),
            capabilities=_dict(body.get("capabilities")),
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
        if self.hangs is not None:
            self.hangs.before(method, params)
        try:
            call = await self.send(message, expect_id=message["id"], timeout=timeout, headers=merged)
        except TransportError as exc:
            # Only a wait of the whole per-request budget is a hang: a check that waits less on purpose
            # (an answer it expects not to come) says nothing about the method.
            full_wait = not isinstance(exc, TransportTimeout) or timeout is None or timeout >= self.timeout
            if self.hangs is not None and full_wait:
                self.hangs.failed(method, exc, first=self.messages_sent == 1, params=params)
            raise
        if self.hangs is not None:
            self.hangs.answered(method)
        return call

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
        self.messages_sent += 1
        if timeout is None:
            timeout = self.opening_timeout or self.timeout
        self.opening_timeout = None
        started = time.monotonic()
        try:
            reply = await self.adapter.exchange(data, expect_id=expect_id, timeout=timeout, headers=headers)
        except TransportError:
            if expect_id is not NO_RESPONSE:
                UNANSWERED.add(time.monotonic() - started)
            raise
        return Call(message if isinstance(message, dict) else None, reply, data)

    async def send_until(self, raw: bytes, *, expect_id: Any, until: Callable[[Frame], bool]) -> Call:
        """Send exact request bytes and wait for their answer or, sooner, for a frame `until` picks
        (`StreamAdapter.exchange_until`); on a stream only, where a request can be cut off mid-way."""
        if not isinstance(self.adapter, StreamAdapter):
            raise TypeError(f"send_until needs a stream transport, not {self.adapter.transport}")
        self.messages_sent += 1
        reply = await self.adapter.exchange_until(raw, expect_id=expect_id, until=until, timeout=self.timeout)
        return Call(None, reply, raw)

    async def probe(self, raw: bytes, *, expect_id: Any, headers: dict[str, str] | None = None) -> Probe:
        """Send exact bytes that may draw no answer, and settle their silence with a sentinel, not a wait.

        On a stream (stdio, legacy SSE) the era's sentinel request follows the probe at once and its
        answer, plus a short grace, settles it (`StreamAdapter.exchange_with_sentinel`): an unanswered
        probe costs a round trip. Over Streamable HTTP each POST carries its own answer; the sentinel
        is sent only when it carried none, to tell a silent server from a gone one. `expect_id` is the
        id the answer should carry (None: id null). Raises TransportError when the sentinel is not
        answered either and the target did not exit: then nothing could be observed.
        """
        self.messages_sent += 1
        method = SENTINEL_METHODS[self.era]
        params: dict[str, Any] | None = {"_meta": self.meta()} if self.era == "modern" else None
        message = jsonrpc.request(f"conformance-sentinel-{self.next_id()}", method, params)
        data = jsonrpc.encode(message)
        sentinel_headers = self.headers_for(method, params)
        started = time.monotonic()
        if not isinstance(self.adapter, StreamAdapter):
            try:
                # expect_id None: an answer with id null in the POST's event stream is the probe's
                # (JSON-RPC's answer to a message whose id could not be read); HTTP pairs by POST.
                return Probe(await self.send(None, expect_id=None, raw=raw, headers=headers))
            except TargetUnreachable:
                raise
            except TransportError as exc:
                failure, status = f"{exc.kind}: {exc}", exc.status
            sentinel = await self.send(message, expect_id=message["id"], headers=sentinel_headers)
            return Probe(Call(None, Reply(response=None, status=status), raw), sentinel, failure=failure)
        settled = await self.adapter.exchange_with_sentinel(
            raw,
            data,
            expect_id=expect_id,
            sentinel_id=message["id"],
            timeout=self.timeout,
            grace=probe_grace,
            headers=headers,
            sentinel_headers=sentinel_headers,
        )
        result = Probe(Call(None, settled.probe, raw))
        if settled.sentinel is not None:
            result.sentinel = Call(message, settled.sentinel, data)
        if settled.closed:
            lines = self.adapter.diagnostics().splitlines()
            if lines and lines[0].startswith("exit status") and "exit status" in settled.closed:
                lines = lines[1:]  # the reason says it already
            result.closed = "\n".join([settled.closed, *lines])
        if not result.answered:
            waited = time.monotonic() - started
            UNANSWERED.add(waited)
            if result.sentinel is not None and result.sentinel.reply.response is None and not result.closed:
                raise ProbeUnanswered(
                    f"neither the probe nor the {method} after it was answered within {self.timeout:g} s",
                    evidence=self.adapter.diagnostics(),
                    probe=result,
                    waited=waited,
                )
        return result

    async def close(self) -> None:
        await self.adapter.close()


def json_text(value: Any) -> str:
    """A JSON value as it was on the wire (20250326, {"a": 1}), for a message: never a Python repr."""
    return json.dumps(value, ensure_ascii=False)[:200]


def result_of(call: Call) -> tuple[bool, Any]:
    """Whether `call` was answered with a result, and that result (of any shape, null included).

    A response whose `result` is null beside an `error` is an error answer; any other `result`
    member is an answer, however malformed its value."""
    value = call.response
    if not isinstance(value, dict) or "result" not in value:
        return False, None
    if value["result"] is None and "error" in value:
        return False, None
    return True, value["result"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _server_info_from_meta(result: dict[str, Any]) -> dict[str, Any]:
    meta = _dict(result.get("_meta"))
    return _dict(meta.get("io.modelcontextprotocol/serverInfo"))


def _head(data: bytes, limit: int, more: str = "…") -> str:
    """The first `limit` characters of `data` as text, then `more` when there is more: only the bytes
    that can make them are decoded (a response near the message cap is never copied whole)."""
    text = data[: 4 * limit + 4].decode("utf-8", errors="replace")
    return text[:limit] + (more if len(text) > limit or len(data) > 4 * limit + 4 else "")
