"""The reference servers' SSE event store: resumable Streamable HTTP streams (2025-03-26 to 2025-11-25).

With it the SDK puts an `id` on every SSE event of a legacy session (and, from 2025-11-25, opens each
POST's stream with a priming event), and a GET carrying `Last-Event-ID` replays what followed that
event on its own stream: what the Resumability and Redelivery section of the transports page allows.

Why it is more than a dictionary: the SDK's session manager hands one store to every session, and
names a request's stream by the request's JSON-RPC id and every session's GET stream alike, so two
sessions' streams share names. A store keyed by stream name alone would replay one session's messages
to another, which the same section forbids ("The server MUST NOT replay messages that would have been
delivered on a different stream"). Each event is therefore stored under the session it belongs to:
`scoped` runs a request under its session's scope (`_EraGate` in serving.py enters it), the SDK's
message router for a session inherits the scope of the request that created the session, and a
replay only looks at events of the scope it runs in. Event IDs come from one counter, so they are
unique across every stream of every session, and the store keeps the newest `capacity` events only.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

#: The session scope of the request being served ("" outside any scope).
_SCOPE: ContextVar[str] = ContextVar("conformance_reference_event_scope", default="")

#: Events kept; older ones are forgotten (a resumption from one of them replays nothing).
CAPACITY: Final = 4096


@contextmanager
def scoped(scope: str) -> Iterator[None]:
    """Serve what runs inside under session scope `scope`."""
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)


class ScopedEventStore(EventStore):
    """In-memory, bounded, per-session event store (see the module docstring)."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._ids = itertools.count(1)
        #: event id -> (scope, stream id, message or None for a priming event), oldest first.
        self._events: OrderedDict[EventId, tuple[str, StreamId, JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self._events[event_id] = (_SCOPE.get(), stream_id, message)
        while len(self._events) > self.capacity:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self._events.get(last_event_id)
        if found is None or found[0] != _SCOPE.get():
            return None  # unknown here, forgotten, or another session's: nothing to replay
        scope, stream_id, _ = found
        later = list(self._events.items())
        start = next(i for i, (event_id, _) in enumerate(later) if event_id == last_event_id) + 1
        for event_id, (event_scope, event_stream, message) in later[start:]:
            if event_scope == scope and event_stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
