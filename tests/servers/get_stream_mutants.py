"""The reference base server with one planted defect in its legacy GET stream or SSE event IDs, for
proving BASE-HTTP-019, -020 and -021 (conformance_packs/base/get_stream.py) and the GET stream's part of
BASE-WIRE-001. `none` is the reference as it is, behind the same middleware.

    python -m tests.servers.get_stream_mutants --defect NAME --http [--port 0] [--log FILE]

With `--log FILE` every GET the server receives is one line there, so a test counts them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference import base_server, serving
from tests.servers.base_http_mutants import _header, take_defect

DEFECTS = {
    "none": "the reference (a per-session event store, a GET stream)",
    "get-response": "opens every GET stream with a JSON-RPC response to a request never sent",
    "get-garbage": "opens every GET stream with an event whose data is not JSON",
    "event-id-repeat": "opens every SSE answer with an empty event whose ID is always the same",
    "replay-other-stream": "starts a Last-Event-ID replay with the session's latest POSTed answer",
    "get-buffered": "holds every GET's answer until its body ends, as a server that buffers whole answers"
    " does (fastapi-mcp): a stream never ends, so no status line ever comes",
}
STRAY_RESPONSE = b'event: message\ndata: {"jsonrpc":"2.0","id":"mutant-stray","result":{}}\n\n'
GARBAGE = b"event: message\ndata: this is not JSON\n\n"
REPEATED_ID = b"id: mutant-0\ndata: \n\n"


def _is_sse(message: Message) -> bool:
    return any(
        k.lower() == b"content-type" and v.startswith(b"text/event-stream")
        for k, v in message.get("headers", [])
    )


def _lead(send: Send, first: bytes) -> Send:
    """Send `first` as the body's first chunk of an event-stream answer."""

    async def wrapped(message: Message) -> None:
        await send(message)
        if message["type"] == "http.response.start" and message["status"] == 200 and _is_sse(message):
            await send({"type": "http.response.body", "body": first, "more_body": True})

    return wrapped


def _buffered(send: Send) -> Send:
    """Send nothing until the body has ended, then the whole answer at once (never, for a stream)."""
    held: list[Message] = []

    async def wrapped(message: Message) -> None:
        held.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            for kept in held:
                await send(kept)
            held.clear()

    return wrapped


def _answers(body: bytes) -> list[bytes]:
    """The `data` of every SSE event of `body` that is a JSON-RPC response."""
    found = []
    for line in body.split(b"\n"):
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict) and "id" in value and ("result" in value or "error" in value):
            found.append(data)
    return found


class Defect:
    def __init__(self, app: ASGIApp, defect: str, log: str = "") -> None:
        self.app = app
        self.defect = defect
        self.log = log
        #: Session id -> the latest answer POSTed in it (replay-other-stream).
        self.latest: dict[str, bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.defect == "none":
            await self.app(scope, receive, send)
            return
        get = scope["method"] == "GET"
        resuming = _header(scope, b"last-event-id") is not None
        if get and self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(f"GET {_header(scope, b'mcp-protocol-version') or '-'}\n")
        if self.defect == "get-buffered" and get:
            send = _buffered(send)
        elif self.defect == "get-response" and get and not resuming:
            send = _lead(send, STRAY_RESPONSE)
        elif self.defect == "get-garbage" and get and not resuming:
            send = _lead(send, GARBAGE)
        elif self.defect == "event-id-repeat":
            send = _lead(send, REPEATED_ID)
        elif self.defect == "replay-other-stream":
            send = self._replay_other(scope, send, get and resuming)
        await self.app(scope, receive, send)

    def _replay_other(self, scope: Scope, send: Send, resuming: bool) -> Send:
        sid = _header(scope, b"mcp-session-id") or ""
        if resuming:
            latest = self.latest.get(sid)
            return _lead(send, b"event: message\ndata: " + latest + b"\n\n") if latest else send

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.body" and sid:
                answers = _answers(message.get("body", b""))
                if answers:
                    self.latest[sid] = answers[-1]
            await send(message)

        return remember


def main(argv: list[str] | None = None) -> int:
    defect, args = take_defect(argv, DEFECTS)
    log = ""
    if "--log" in args and args.index("--log") + 1 < len(args):
        at = args.index("--log")
        log = args[at + 1]
        del args[at : at + 2]
    build = serving.build_http_app

    def build_with_defect(server: Any, *, era: Any = "both") -> ASGIApp:
        return Defect(build(server, era=era), defect, log)

    serving.build_http_app = build_with_defect  # type: ignore[assignment]
    return base_server.main(args)


if __name__ == "__main__":
    sys.exit(main())
