"""The one small protocol every transport implements (the wire log it records: `transcript`).

An adapter moves exact bytes and records them; it never judges them. A check asks the adapter to
`exchange` one message and gets a `Reply` with every frame that arrived meanwhile, the response that
answers it (if any) and, for HTTP, the status line and headers. Transport failures are raised as
`TransportError` so the runner can turn them into ERROR verdicts with evidence.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.transcript import Transcript
from conformance.protocol.jsonrpc import Frame
from conformance.text import bytes_text

#: Extra HTTP headers of one request, or None.
Headers = Mapping[str, str] | None

#: Answers a request the server sent while one of ours was awaited (legacy sampling, elicitation,
#: roots): given its frame, the bytes of the response to send back. Set by the protocol session.
RequestAnswerer = Callable[[Frame], bytes]

#: A sentinel for `exchange(expect_id=NO_RESPONSE)`: the message is a notification or a raw probe.
NO_RESPONSE: Any = object()

#: How many frames one reply keeps (a notification flood is counted past this).
FRAMES_PER_REPLY = 500
#: How many more frames a reply keeps past that, of those that are not notifications (answers, requests):
#: a flood of notifications must not push an answer written after it out of the frames a check reads
#: by id (the early ping's answer behind 2,000 notifications), and a flood of answers stays bounded.
ANSWERS_PAST_FLOOD = 500
#: Answers a stream adapter keeps by id, of every frame it read (`StreamAdapter.answer_to`): an answer
#: to a request written without waiting (an early ping) is found however it came, among another
#: request's frames or drained before a send; a flood of answers keeps the latest this many.
ANSWERS_KEPT = 1024
#: Bytes of received frames a stream adapter queues ahead of the harness; past it its reader waits (and
#: so does a server writing faster), so a flood of large messages holds this much, not 10,000 of them.
QUEUED_BYTES = 16 * 1024 * 1024


class TransportError(Exception):
    """The transport broke: the harness could not judge the exchange. Carries evidence for the report."""

    kind = "transport"

    def __init__(self, message: str, *, evidence: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.evidence = evidence
        #: The HTTP status of the answer that broke the exchange, where there was one.
        self.status = status
        #: Set by the engine when this failure was not met anew but repeats one an earlier case met (a
        #: remembered exchange, a method not sent again): that case's report key. The runner reports a
        #: case ended by it as SKIP blocked by that case: one defect, one verdict.
        self.blocked_by: str | None = None
        #: False when nothing reached the server (a remembered failure raised again): the session is as
        #: it was, and is not restarted for it.
        self.sent = True


class TransportTimeout(TransportError):
    kind = "timeout"


class TransportClosed(TransportError):
    kind = "closed"


class TransportTooLarge(TransportError):
    kind = "oversize"


def too_large(frame: Frame, cap: int) -> str:
    """What made a frame with `extra["oversize"]` too large to read: its bytes or its JSON values."""
    if "values" in frame.extra or "depth" in frame.extra:
        return frame.problem.removesuffix("; not parsed")
    if frame.extra.get("partial"):
        read = frame.extra["oversize"]
        return f"a message exceeded the {cap}-byte cap ({read} bytes read, the rest discarded)"
    return f"a {frame.extra['oversize']}-byte message exceeded the {cap}-byte cap"


class TransportViolation(TransportError):
    """The server answered a request in a form its transport forbids, with no JSON-RPC answer to read
    (a 2xx in a content type that is neither application/json nor text/event-stream, say).

    Unlike the other transport failures something was observed: the runner reports the broken
    transport rule once, on the case that judges it, and the cases that needed the answer as blocked.
    """

    kind = "violation"


class TargetUnreachable(TransportError):
    """The target could not be started or connected to at all (exit code 3 territory)."""

    kind = "unreachable"


def cause_in_words(exc: BaseException, *, url: str = "", program: str = "") -> str:
    """Why a target could not be started or reached, in words a user reads (`command not found: X`,
    `connection refused at 127.0.0.1:9`), never Python's exception text (`[Errno 111] Connect call
    failed ('127.0.0.1', 9)`): the first operating-system error in the exception's chain says it."""
    import errno as codes
    import os
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url) if url else None
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}" if parts else ""
    seen: BaseException | None = exc
    for _ in range(16):  # the chain is short; bounded all the same
        if seen is None:
            break
        if isinstance(seen, FileNotFoundError) and program:
            return f"command not found: {program}"
        if isinstance(seen, PermissionError) and program:
            return f"not allowed to run {program} (is it executable?)"
        if isinstance(seen, socket.gaierror):
            return f"host name not found: {parts.hostname if parts else '?'}"
        if isinstance(seen, OSError) and seen.errno:
            words = {
                codes.ECONNREFUSED: "connection refused",
                codes.EHOSTUNREACH: "host unreachable",
                codes.ENETUNREACH: "network unreachable",
                codes.ETIMEDOUT: "connection timed out",
                codes.ECONNRESET: "connection reset",
            }.get(seen.errno) or os.strerror(seen.errno).lower()
            return f"{words} at {where}" if where else f"{words}: {program}" if program else words
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


@dataclass
class Reply:
    """What came back for one exchange."""

    response: Frame | None
    frames: list[Frame] = field(default_factory=list)
    dropped_frames: int = 0
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0
    #: Set by the adapter when the answer to a request broke a transport rule (for HTTP: a content
    #: type other than application/json or text/event-stream); a fact, judged by the engine.
    violation: str = ""
    #: The SSE events of the answer that set an event ID, in order: (that ID, the event's frame, or
    #: None for an event with empty data such as a 2025-11-25 priming event). At most FRAMES_PER_REPLY.
    event_ids: list[tuple[str, Frame | None]] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def unexpected(self) -> list[Frame]:
        """Frames that are neither the response nor a well-formed notification: evidence of misbehaviour."""
        return [f for f in self.frames if f is not self.response and f.kind != "notification"]


class Adapter(abc.ABC):
    """One connection to a target. Sequential use per instance; races use separate instances."""

    transport: str = ""

    def __init__(self, transcript: Transcript, *, max_message_bytes: int) -> None:
        self.transcript = transcript
        self.max_message_bytes = max_message_bytes
        #: Who answers a server-to-client request (None: it is recorded, never answered). The adapter
        #: only moves the bytes; which answer a request gets is the session's business.
        self.answer_request: RequestAnswerer | None = None

    @abc.abstractmethod
    async def start(self) -> None:
        """Start or connect; raise TargetUnreachable when that is impossible."""

    async def exchange(
        self,
        message: bytes,
        *,
        expect_id: Any,
        timeout: float,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send one message; wait (bounded) for the response whose id is `expect_id`, unless NO_RESPONSE.

        The one public signature of every transport; each implements `_exchange`.
        """
        return await self._exchange(message, expect_id, timeout, headers)

    @abc.abstractmethod
    async def _exchange(self, message: bytes, expect_id: Any, timeout: float, headers: Headers) -> Reply:
        """The transport's `exchange`: `headers` are extra HTTP request headers (None: none)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release everything: processes, connections, streams. Safe to call twice."""

    def describe(self) -> str:
        return self.transport

    def diagnostics(self) -> str:
        """Transport-specific evidence for an ERROR (for stdio: the tail of stderr and the exit status)."""
        return ""


class StreamAdapter(Adapter):
    """Shared receive logic for transports where responses arrive on a stream (stdio, legacy SSE)."""

    def __init__(self, transcript: Transcript, *, max_message_bytes: int) -> None:
        super().__init__(transcript, max_message_bytes=max_message_bytes)
        self._frames: asyncio.Queue[Frame | None] = asyncio.Queue(maxsize=10_000)
        self._queued_bytes = 0
        self._room = asyncio.Event()
        self._room.set()
        self._closed_reason = ""
        #: Ids this adapter gave up on or already saw answered: a later response with one is stale.
        self._settled_ids: list[Any] = []
        #: Probes with id null whose answer never came in time: a later null-id answer belongs to them.
        self._late_null_answers = 0
        #: Answer-shaped frames that arrived when no request was waiting for them.
        self.stale_frames = 0
        #: Set while a sentinel is sent right after a probe: what arrived meanwhile may be the probe's answer.
        self._hold_pending = False
        #: Every answer-shaped frame read off the stream, in the order read, by whichever wait or drain
        #: read it (`_taken` is the one place a frame leaves the queue): nothing read is lost to a
        #: request that was not waiting for it (`answer_to`).
        self._answers: deque[Frame] = deque(maxlen=ANSWERS_KEPT)

    def unawaited(self, *ids: Any) -> None:
        """Requests written without waiting for their answers (`NO_RESPONSE`), whose answers are still
        to come: each is stale when it comes, kept among the awaited reply's frames and never taken for
        that reply (on a stream the first answer-shaped frame answers the one awaited request)."""
        self._settled_ids.extend(i for i in ids if i is not None)

    async def _frame_within(self, seconds: float) -> Frame | None:
        """The next frame (None: the stream ended); TimeoutError when none arrives within `seconds`.

        A queued frame is taken at once; asyncio.timeout, not wait_for: no extra task per frame on
        this hot path.
        """
        try:
            return self._taken(self._frames.get_nowait())
        except asyncio.QueueEmpty:
            async with asyncio.timeout(seconds):
                return self._taken(await self._frames.get())

    async def _enqueue(self, frame: Frame) -> None:
        """Queue a received frame for the harness, waiting while QUEUED_BYTES are queued already (one
        frame is always let through, whatever its size up to the message cap)."""
        size = len(frame.raw)
        while self._queued_bytes and self._queued_bytes + size > QUEUED_BYTES:
            self._room.clear()
            await self._room.wait()
        self._queued_bytes += size
        await self._frames.put(frame)

    def _taken(self, frame: Frame | None) -> Frame | None:
        """A frame just read off the queue: its bytes make room, and an answer is kept by id."""
        if frame is not None:
            self._queued_bytes -= len(frame.raw)
            self._room.set()
            if frame.kind in ("response", "error", "invalid") and frame.id is not None:
                self._answers.append(frame)
        return frame

    def answer_to(self, msg_id: Any) -> Frame | None:
        """The first answer read with id `msg_id` (same JSON type too), or None: read by whichever wait
        or drain it came in (another request's wait keeps it among that reply's frames, the drain
        before a send among none). Why: a request written without waiting (`unawaited`) is answered
        when the server pleases, also just after a later request's answer, between two waits."""
        return next((f for f in self._answers if _same_id(f.id, msg_id)), None)

    def _stream_ended(self, reason: str) -> None:
        self._closed_reason = reason
        # A full queue is drained by the waiting reader, which then times out with evidence: bounded.
        with contextlib.suppress(asyncio.QueueFull):
            self._frames.put_nowait(None)

    async def _await_response(
        self, expect_id: Any, timeout: float, started: float, until: Callable[[Frame], bool] | None = None
    ) -> Reply:
        reply = Reply(response=None)
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if expect_id is not NO_RESPONSE:
                    if expect_id is not None:
                        self._settled_ids.append(expect_id)
                    else:
                        self._late_null_answers += 1
                    raise TransportTimeout(
                        f"no response to request id {expect_id!r} within {timeout:g} s"
                        + _idless_seen(reply.frames),
                        evidence=self.diagnostics(),
                    )
                break
            try:
                frame = await self._frame_within(remaining)
            except TimeoutError:
                continue
            if frame is None:
                self._stream_ended(self._closed_reason)  # keep the sentinel for the next caller
                if expect_id is NO_RESPONSE:
                    break
                raise TransportClosed(
                    f"the target closed its stream before answering id {expect_id!r}: {self._closed_reason}",
                    evidence=self.diagnostics(),
                )
            if _keeps(reply, frame):
                reply.frames.append(frame)
            else:
                reply.dropped_frames += 1
            if expect_id is not NO_RESPONSE and "oversize" in frame.extra:
                # Almost surely the answer itself, discarded unread: waiting out the timeout would add
                # nothing but time.
                self._settled_ids.extend(i for i in (expect_id,) if i is not None)
                raise TransportTooLarge(
                    f"{too_large(frame, self.max_message_bytes)} while id {expect_id!r} was awaited",
                    evidence=self.diagnostics(),
                )
            if frame.kind == "request" and self.answer_request is not None:
                await self._answer(frame, max(remaining, 0.5))
            if until is not None and until(frame):
                # The request's answer, should it come later, is stale: never a later request's.
                self._settled_ids.extend(i for i in (expect_id,) if i is not None)
                break
            if expect_id is NO_RESPONSE or frame.kind not in ("response", "error", "invalid"):
                continue
            if self._late(frame, expect_id):
                continue
            if expect_id is not None and frame.idless_reply:
                # A reply without an id answers no numbered request (a notification): kept among the
                # frames, never this request's answer.
                continue
            # One request is outstanding per adapter, so the first answer-shaped frame with an id answers
            # it even when that id is wrong: the id-echo check must see that and say FAIL, not wait for
            # a timeout.
            reply.response = frame
            self._settled_ids.extend(i for i in (frame.id, expect_id) if i is not None)
            del self._settled_ids[:-256]
            break
        reply.elapsed = time.monotonic() - started
        return reply

    def _late(self, frame: Frame, expect_id: Any, *, own_id_late: bool = False) -> bool:
        """Whether an answer-shaped `frame` is the late answer to an earlier request, not one to the
        message awaited (its id `expect_id`, None for id null): the one rule of every wait here. Its
        id was settled already (given up on, or answered; with `own_id_late` even when it is
        `expect_id`, which a probe may repeat on purpose), or it has id null while an earlier probe
        with id null still owes its answer (that debt is counted off). A late frame is marked stale."""
        if frame.id is not None and frame.id in self._settled_ids and (own_id_late or frame.id != expect_id):
            frame.extra["stale"] = True
            return True
        if frame.id is None and expect_id is not None and self._late_null_answers:
            self._late_null_answers -= 1
            frame.extra["stale"] = True
            return True
        return False

    async def _answer(self, frame: Frame, timeout: float) -> None:
        """Send the session's answer to a request the server made while ours was awaited.

        Why here: on a stream the server waits for this answer before it answers our request, so the
        wait for our answer must send it. Frames queued meanwhile are kept for the awaited request.
        """
        assert self.answer_request is not None
        data = self.answer_request(frame)
        self._hold_pending = True
        try:
            await self._exchange(data, NO_RESPONSE, timeout, None)
        finally:
            self._hold_pending = False

    async def exchange_until(
        self,
        message: bytes,
        *,
        expect_id: Any,
        until: Callable[[Frame], bool],
        timeout: float,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send a request and wait for its answer or, sooner, for a frame `until` picks.

        Why: to cancel a request while it runs, the cancellation must follow a sign that it runs (its
        first progress notification), not a guess at how long it takes; on a loaded machine any fixed
        wait is either too short or too long. When `until` stops the wait the reply has no response,
        and the request's answer, should it come later, is stale, never a later request's.
        """
        started = time.monotonic()
        sent = await self.exchange(message, expect_id=NO_RESPONSE, timeout=timeout, headers=headers)
        if sent.status is not None and sent.status >= 400:
            return sent  # the POST was refused: nothing for it comes on the stream
        reply = await self._await_response(expect_id, timeout, started, until)
        reply.status = sent.status
        return reply

    def drain_pending(self) -> list[Frame]:
        """Frames that arrived after the last exchange settled (duplicates, late or unsolicited answers).

        Called before every send: nothing already waiting can be the answer to a message not sent yet,
        so a duplicated response is never mistaken for the next request's answer. What is drained is
        not lost: the transcript has it, and an answer stays readable by id (`answer_to`).
        """
        out: list[Frame] = []
        if self._hold_pending:
            return out
        while not self._frames.empty():
            frame = self._taken(self._frames.get_nowait())
            if frame is None:
                self._stream_ended(self._closed_reason)
                break
            frame.extra["stale"] = True
            out.append(frame)
        self.stale_frames += sum(f.kind in ("response", "error", "invalid") for f in out)
        return out

    async def answer_waiting(self, timeout: float) -> int:
        """Answer the server's requests that arrived while nothing was awaited, which the next send would
        drain as stale, unanswered; the other waiting frames are drained as it would. How many answered.

        Why: a client that declared input answers whenever it is asked, also between its requests (the
        input sweep's session, idle from its opening until the sweep's first call: server-everything
        asks for roots/list then)."""
        answered = 0
        for frame in self.drain_pending():
            if frame.kind == "request" and self.answer_request is not None:
                await self._answer(frame, timeout)
                answered += 1
        return answered

    async def exchange_with_sentinel(
        self,
        message: bytes,
        sentinel: bytes,
        *,
        expect_id: Any,
        sentinel_id: Any,
        timeout: float,
        grace: Callable[[float], float],
        headers: Mapping[str, str] | None = None,
        sentinel_headers: Mapping[str, str] | None = None,
    ) -> Settled:
        """Send `message`, which may draw no answer at all, then `sentinel`, a request the target must
        answer, and collect what comes back for each.

        Why: on a stream, silence can only be told from slowness by something later that is answered.
        The sentinel's answer settles the probe: a target that answers in order has answered the probe
        by then, and `grace(sentinel round trip)` seconds more covers one that answers concurrently. So
        an unanswered probe costs a round trip, not a fixed wait. `expect_id` is the id the probe's
        answer should carry (None: id null), used only to keep a late answer from being taken for a
        later request's; any other answer-shaped frame but the sentinel's is the probe's answer, as
        `exchange` takes the first answer even when its id is wrong, so a wrong id can be judged.
        Without the sentinel's answer within `timeout`, or when the stream ends, it returns what came.
        """
        started = time.monotonic()
        first = await self.exchange(message, expect_id=NO_RESPONSE, timeout=timeout, headers=headers)
        if first.status is not None and first.status >= 400:
            return Settled(first, None, time.monotonic() - started)  # the POST was refused: no stream answer
        self._hold_pending = True  # the probe's answer may be queued already: the sentinel's send keeps it
        try:
            sent = await self.exchange(
                sentinel, expect_id=NO_RESPONSE, timeout=timeout, headers=sentinel_headers
            )
        finally:
            self._hold_pending = False
        probe, answer = Reply(response=None, status=first.status), Reply(response=None, status=sent.status)
        deadline = started + timeout
        sentinel_sent = time.monotonic()
        closed = ""
        while probe.response is None or answer.response is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                frame = await self._frame_within(remaining)
            except TimeoutError:
                break
            if frame is None:
                self._stream_ended(self._closed_reason)  # keep the sentinel for the next caller
                closed = self._closed_reason
                break
            if frame.id == sentinel_id and frame.kind in ("response", "error", "invalid"):
                answer.response = frame
                answer.frames.append(frame)
                now = time.monotonic()
                deadline = min(deadline, now + grace(now - sentinel_sent))
                continue
            if _keeps(probe, frame):
                probe.frames.append(frame)
            else:
                probe.dropped_frames += 1
            if probe.response is not None or frame.kind not in ("response", "error", "invalid"):
                continue
            if self._late(frame, expect_id, own_id_late=True):
                continue
            probe.response = frame
        for reply, wanted in ((probe, expect_id), (answer, sentinel_id)):
            reply.elapsed = time.monotonic() - started
            if reply.response is not None:
                self._settled_ids.extend(i for i in (reply.response.id, wanted) if i is not None)
            elif wanted is not None:
                self._settled_ids.append(wanted)  # a late answer is stale, not the next request's
            elif not closed:
                self._late_null_answers += 1
        del self._settled_ids[:-256]
        return Settled(probe, answer, time.monotonic() - started, closed)


def _same_id(got: Any, wanted: Any) -> bool:
    """Whether an answer's id is `wanted`: equal and of the same JSON type (1 is not true, nor 1.0)."""
    return got is not None and got == wanted and type(got) is type(wanted)


def _keeps(reply: Reply, frame: Frame) -> bool:
    """Whether `reply` keeps `frame`: every frame up to `FRAMES_PER_REPLY`, then only those that are not
    notifications, up to `ANSWERS_PAST_FLOOD` more (the rest is counted in `dropped_frames`)."""
    kept = len(reply.frames)
    if kept < FRAMES_PER_REPLY:
        return True
    return frame.kind != "notification" and kept < FRAMES_PER_REPLY + ANSWERS_PAST_FLOOD


def _idless_seen(frames: list[Frame]) -> str:
    """What a timed-out request's wait saw that no request can be matched to: replies without an id
    (a server that answers without echoing the id, or answers a notification), said in its message."""
    idless = [f for f in frames if f.idless_reply and not f.extra.get("stale")]
    if not idless:
        return ""
    return (
        f"; meanwhile {len(idless)} repl{'y' if len(idless) == 1 else 'ies'} without an id came, which"
        f" answer no numbered request: {bytes_text(idless[0].raw, 200)}"
    )


@dataclass
class Settled:
    """What a probe settled by a sentinel drew (`StreamAdapter.exchange_with_sentinel`)."""

    probe: Reply
    #: The sentinel's reply; None when the probe was refused outright (an HTTP error status).
    sentinel: Reply | None
    elapsed: float
    #: Why the stream ended before both answers were in (the target exited), or "".
    closed: str = ""
