"""The reference base server over Streamable HTTP, answering an unknown method as Go SDK servers do.

One planted defect: a POST whose JSON-RPC answer is a -32601 error (JSON or SSE) goes out instead as
`400 text/plain` with no JSON-RPC body. Everything else is the reference, in every revision it speaks,
so the harness's tests can prove that one broken transport rule is one FAIL (BASE-HTTP-005) in each
revision, and that the cases needing the answer are blocked by it, not ERROR or FAIL.

    python -m tests.servers.text_errors_server --http --port 0
"""

from __future__ import annotations

import sys
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference import base_server, serving

TEXT = b"method not found\n"


class TextMethodNotFound:
    """ASGI middleware: buffer each POST's answer; a method-not-found answer becomes 400 text/plain."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            if b'"code":-32601' in body.replace(b" ", b""):
                headers = [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", b"%d" % len(TEXT)),
                ]
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": TEXT})
                return
            assert start is not None
            await send(start)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


def main(argv: list[str] | None = None) -> int:
    build = serving.build_http_app

    def build_with_defect(server: Any, *, era: Any = "both") -> ASGIApp:
        return TextMethodNotFound(build(server, era=era))

    serving.build_http_app = build_with_defect  # type: ignore[assignment]
    return base_server.main(argv)


if __name__ == "__main__":
    sys.exit(main())
