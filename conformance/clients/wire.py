"""What a client sent, exactly as it arrived, and what the scenario server answered.

Why its own module: every check of the client side reads the same record (the messages in order, each
with the HTTP request that carried it, its headers and when it came), whatever transport carried them,
and the report's transcript is written from it through the adapters' one wire log
(`conformance.adapters.transcript.Transcript`: masking, the memory budget, the one cut marker).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.transcript import Transcript
from conformance.protocol.jsonrpc import Frame, classify, kind_of


@dataclass(frozen=True)
class Arrival:
    """One thing the client sent: an HTTP request (method, path, headers, body) or a stdio line."""

    #: Seconds since the scenario server started.
    t: float
    #: "POST", "GET", "DELETE" ... for HTTP; "LINE" for a stdio line.
    method: str
    path: str = ""
    #: Header names lower-cased, values as sent (the last of a repeated header; `raw_headers` has all).
    headers: Mapping[str, str] = field(default_factory=dict)
    raw_headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def frames(self) -> list[Frame]:
        """The JSON-RPC messages the body carries (a batch is split), or none for an empty body."""
        if not self.body.strip():
            return []
        frame = classify(self.body)
        if isinstance(frame.value, list):
            return [Frame(frame.raw, item, kind_of(item)) for item in frame.value]
        return [frame]


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message the client sent, with the arrival that carried it."""

    value: Any
    arrival: Arrival

    @property
    def method(self) -> str | None:
        method = self.value.get("method") if isinstance(self.value, dict) else None
        return method if isinstance(method, str) else None

    @property
    def params(self) -> Any:
        return self.value.get("params") if isinstance(self.value, dict) else None

    @property
    def is_request(self) -> bool:
        return isinstance(self.value, dict) and "method" in self.value and "id" in self.value


class Recording:
    """The exchange of one scenario run: what the client sent (`arrivals`, in order) and the wire log
    of both directions (`transcript`, for the report)."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        self.arrivals: list[Arrival] = []
        self.transcript = Transcript(secrets)
        self._t0 = time.monotonic()
        #: Named instants the scenario marks (a stream closed, a retry advertised), seconds since start.
        self.marks: dict[str, float] = {}
        #: What the scenario server gave the client that checks compare with (`session_id`).
        self.facts: dict[str, Any] = {}
        #: The arrivals the scenario answered at the HTTP layer (`Scenario.on_http`: a 401 challenge, a
        #: 403 step-up) before any MCP session read them: their messages were never delivered, so a
        #: request retried with the same ID after authorizing is not a reuse.
        self._turned_away: set[int] = set()
        #: Set at each arrival and mark, so a scenario waits for what the client does (`until`).
        self._changed = asyncio.Event()

    async def until(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Whether `ready()` came to hold within `timeout` seconds: re-tested at each arrival and mark
        (the scenario server and the recording share one event loop), never on a clock of its own."""
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            if ready():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                return ready()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def mark(self, name: str) -> None:
        self.marks[name] = self.now()
        self._changed.set()

    def arrived(self, method: str, path: str, raw_headers: list[tuple[str, str]], body: bytes) -> Arrival:
        """Record what the client sent, in the log and the arrivals."""
        headers = {name.lower(): value for name, value in raw_headers}
        arrival = Arrival(self.now(), method, path, headers, tuple(raw_headers), body)
        self.arrivals.append(arrival)
        self._changed.set()
        channel = f"{method} {path}" if method != "LINE" else "stdin"
        self.transcript.record("recv", body, channel=channel, headers=headers if method != "LINE" else None)
        return arrival

    def answered(self, data: bytes, *, channel: str, status: int | None = None, headers: Any = None) -> None:
        """Record what the scenario server wrote back."""
        self.transcript.record("send", data, channel=channel, status=status, headers=headers)

    def turned_away(self, arrival: Arrival) -> None:
        """Note that `arrival` was answered at the HTTP layer, its messages never delivered."""
        self._turned_away.add(id(arrival))

    def delivered(self, arrival: Arrival) -> bool:
        """Whether `arrival`'s messages reached the scenario's MCP session."""
        return id(arrival) not in self._turned_away

    def event(self, note: str) -> None:
        self.transcript.record("event", note=note)

    def messages(self) -> Iterator[Message]:
        for arrival in self.arrivals:
            for frame in arrival.frames():
                yield Message(frame.value, arrival)

    def requests(self, method: str) -> list[Message]:
        """The client's requests (and notifications) of `method`, in order."""
        return [m for m in self.messages() if m.method == method]

    def responses(self) -> list[Message]:
        """The client's answers to the scenario server's own requests."""
        return [m for m in self.messages() if m.method is None and isinstance(m.value, dict)]
