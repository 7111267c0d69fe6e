"""Incremental parser for text/event-stream bodies (the WHATWG event-stream format), byte-capped.

Shared by the Streamable HTTP adapter (SSE responses to a POST) and the 2024-11-05 HTTP+SSE adapter.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: Names the setting in a message about the cap.
_CAP = " (max_message_bytes)"


@dataclass
class SseEvent:
    event: str
    data: bytes
    #: The last event ID buffer when the event was dispatched (WHATWG: it carries over to later events).
    id: str | None = None
    #: The ID this event's own `id` field set, or None when it had no `id` field.
    own_id: str | None = None


class SseParser:
    """Feed bytes, get complete events. An event larger than `max_event_bytes` raises ValueError."""

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._buf = bytearray()
        self._data: list[bytes] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None
        self._own_id: str | None = None
        #: How much of `_buf` is known to hold no line end (a long line is not searched twice).
        self._scanned = 0
        #: The reconnection time the latest `retry` field set, in milliseconds (WHATWG: digits only).
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> Iterator[SseEvent]:
        self._buf += chunk
        while True:
            idx = _line_end(self._buf, self._scanned)
            if idx is None:
                # A long line is searched for its end once: what is already scanned is not again.
                self._scanned = max(0, len(self._buf) - 1)
                if len(self._buf) > self.max_event_bytes:
                    raise ValueError(
                        f"an SSE line exceeded the {self.max_event_bytes}-byte cap (max_message_bytes)"
                    )
                return
            end, skip = idx
            name, value = self._field(end)
            del self._buf[: end + skip]
            self._scanned = 0
            if name is None:  # an empty line: the event is complete
                if self._data or self._event:
                    yield SseEvent(self._event or "message", b"\n".join(self._data), self._id, self._own_id)
                self._data, self._size, self._event, self._own_id = [], 0, "", None
                continue
            if name == b"data":
                self._size += len(value)
                if self._size > self.max_event_bytes:
                    raise ValueError(
                        f"an SSE event exceeded the {self.max_event_bytes}-byte cap (max_message_bytes)"
                    )
                self._data.append(value)
            elif name == b"event":
                self._event = value.decode("utf-8", errors="replace")
            elif name == b"retry" and value.isdigit():
                self.retry = int(value)
            elif name == b"id" and 0 not in value:  # WHATWG: an id with a NUL is ignored
                self._id = self._own_id = value.decode("utf-8", errors="replace")

    def _field(self, end: int) -> tuple[bytes | None, bytes]:
        """The field name and value of the line that ends at `end` (None for an empty line, b"" for a
        comment), the value copied once out of the buffer: a data line near the cap is not copied
        again to split it."""
        if end == 0:
            return None, b""
        buf = self._buf
        if buf[0] == 0x3A:  # ":" a comment
            return b"", b""
        colon = buf.find(b":", 0, end)
        if colon < 0:
            return bytes(buf[:end]), b""
        start = colon + 1
        if start < end and buf[start] == 0x20:
            start += 1
        with memoryview(buf) as view:
            return bytes(view[:colon]), bytes(view[start:end])


def _line_end(buf: bytearray, start: int = 0) -> tuple[int, int] | None:
    """Position and length of the first line terminator (CRLF, LF or CR) at or after `start`, or None."""
    lf = buf.find(b"\n", start)
    cr = buf.find(b"\r", start, lf if lf >= 0 else len(buf))
    if cr < 0:
        return (lf, 1) if lf >= 0 else None
    if cr + 1 == len(buf):
        return None  # a CR at the end may be the first half of a CRLF
    return (cr, 2) if buf[cr + 1] == 0x0A else (cr, 1)
