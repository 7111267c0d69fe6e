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
    id: str | None = None


class SseParser:
    """Feed bytes, get complete events. An event larger than `max_event_bytes` raises ValueError."""

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._buf = bytearray()
        self._data: list[bytes] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None

    def feed(self, chunk: bytes) -> Iterator[SseEvent]:
        self._buf += chunk
        while True:
            idx = _line_end(self._buf)
            if idx is None:
                if len(self._buf) > self.max_event_bytes:
                    raise ValueError(
                        f"an SSE line exceeded the {self.max_event_bytes}-byte cap (max_message_bytes)"
                    )
                return
            end, skip = idx
            line = bytes(self._buf[:end])
            del self._buf[: end + skip]
            if not line:
                if self._data or self._event:
                    yield SseEvent(self._event or "message", b"\n".join(self._data), self._id)
                self._data, self._size, self._event = [], 0, ""
                continue
            if line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                self._size += len(value)
                if self._size > self.max_event_bytes:
                    raise ValueError(
                        f"an SSE event exceeded the {self.max_event_bytes}-byte cap (max_message_bytes)"
                    )
                self._data.append(value)
            elif name == b"event":
                self._event = value.decode("utf-8", errors="replace")
            elif name == b"id":
                self._id = value.decode("utf-8", errors="replace")


def _line_end(buf: bytearray) -> tuple[int, int] | None:
    """Position and length of the first line terminator (CRLF, LF or CR), or None."""
    lf = buf.find(b"\n")
    cr = buf.find(b"\r", 0, lf if lf >= 0 else len(buf))
    if cr < 0:
        return (lf, 1) if lf >= 0 else None
    if cr + 1 == len(buf):
        return None  # a CR at the end may be the first half of a CRLF
    return (cr, 2) if buf[cr + 1] == 0x0A else (cr, 1)
