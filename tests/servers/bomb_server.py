"""A hostile Streamable HTTP server whose answers are compression bombs, to prove the harness decodes
within its message cap and survives: bounded memory, an ERROR naming the cap or the refused coding.

    python -m tests.servers.bomb_server MODE [--only METHOD] [--tag TAG]

It prints `LISTENING http://127.0.0.1:<port>/mcp` once it accepts connections. With `--only tools/list`
the planted fault answers that method alone and the rest is honest, so the bomb lands after a
successful initialization instead of on it.

Bombs are made on the fly and streamed with chunked transfer coding: a megabyte of filler is
compressed once, its compressed form (a full flush resets the compressor, so every repetition is
the same bytes) is sent again and again, about a kilobyte per decoded megabyte, until the declared
size is reached or the client hangs up. Nothing near the decoded size is ever held in memory, here
or (if the harness is right) there. Every mode starts from the conformant raw server, so only the
planted bomb can explain what the harness reports.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers import loopback
from tests.servers.raw_server import Server

MODES = {
    "gzip": "every answer is a gzip bomb (8 GiB of zeros in about 8 MB)",
    "gzip-gzip": "every answer is a gzip bomb gzipped again (Content-Encoding: gzip, gzip)",
    "deflate": "every answer is a deflate (zlib) bomb",
    "stacked3": "every answer is honest JSON under three gzip layers (Content-Encoding: gzip, gzip, gzip)",
    "unknown": "every answer claims Content-Encoding: compress (LZW), which the harness does not decode",
    "sse-gzip": "every answer is a gzip-compressed SSE stream whose one event never ends",
    "after-init": "answers honestly, but tools/list with a gzip bomb (gzip --only tools/list)",
    "honest-gzip": "compresses honestly when asked to: JSON answers gzipped, tools/list as a gzipped SSE"
    " stream; echoes the Accept-Encoding it got in X-Seen-Accept-Encoding",
}
MIB = 1 << 20
#: Decoded bytes of one bomb: far past any cap, never materialised on either side.
BOMB_BYTES = 8 << 30
GZIP, ZLIB = zlib.MAX_WBITS | 16, zlib.MAX_WBITS


def compressed_flood(prefix: bytes, filler: bytes, total: int, wbits: int) -> Iterator[bytes]:
    """`prefix` then `filler` repeated up to `total` decoded bytes, compressed (gzip or zlib framing),
    streamed: the repeated block is compressed once."""
    block = filler * (MIB // len(filler))
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    yield comp.compress(prefix + block) + comp.flush(zlib.Z_FULL_FLUSH)
    again = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    for _ in range(total // len(block)):
        yield again
    yield comp.flush()


def recompress(pieces: Iterator[bytes], wbits: int) -> Iterator[bytes]:
    """Another compression layer over a stream of compressed pieces."""
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    for piece in pieces:
        out = comp.compress(piece)
        if out:
            yield out
    yield comp.flush()


def bomb(mode: str, msg_id: Any) -> tuple[str, str, Iterator[bytes]]:
    """(Content-Type, Content-Encoding, body pieces) of the bomb a mode answers with."""
    if mode == "gzip-gzip":
        return (
            "application/json",
            "gzip, gzip",
            recompress(compressed_flood(b"", b"\0", BOMB_BYTES, GZIP), GZIP),
        )
    if mode == "deflate":
        return "application/json", "deflate", compressed_flood(b"", b"\0", BOMB_BYTES, ZLIB)
    if mode == "sse-gzip":
        head = b'event: message\ndata: {"jsonrpc": "2.0", "id": ' + json.dumps(msg_id).encode()
        head += b', "result": {"pad": "'
        return "text/event-stream", "gzip", compressed_flood(head, b"x", BOMB_BYTES, GZIP)
    return "application/json", "gzip", compressed_flood(b"", b"\0", BOMB_BYTES, GZIP)


def serve(mode: str, only: str) -> None:
    server = Server("none")
    if mode == "after-init":
        mode, only = "gzip", "tools/list"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send(405, b"", "application/json")

        def do_DELETE(self) -> None:
            self.send(405, b"", "application/json")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                message = json.loads(body)
            except ValueError:
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
                self.send(400, json.dumps(error).encode(), "application/json")
                return
            response = server.handle(message)
            if response is None:
                self.send(202, b"", "application/json")
                return
            method = message.get("method") if isinstance(message, dict) else None
            data = json.dumps(response).encode()
            if mode == "honest-gzip":
                self.honest(data, method == "tools/list")
            elif only and method != only:
                self.send(200, data, "application/json")
            elif mode == "stacked3":
                self.send(
                    200,
                    gzip.compress(gzip.compress(gzip.compress(data))),
                    "application/json",
                    "gzip, gzip, gzip",
                )
            elif mode == "unknown":
                self.send(200, data, "application/json", "compress")
            else:
                ctype, coding, pieces = bomb(mode, response.get("id"))
                self.stream(ctype, coding, pieces)

        def honest(self, data: bytes, as_sse: bool) -> None:
            seen = self.headers.get("Accept-Encoding", "")
            extra = {"X-Seen-Accept-Encoding": seen}
            accepted = {c.split(";")[0].strip().lower() for c in seen.split(",")}
            if as_sse:
                data = b"event: message\ndata: " + data + b"\n\n"
            ctype = "text/event-stream" if as_sse else "application/json"
            if "gzip" in accepted:
                self.send(200, gzip.compress(data), ctype, "gzip", extra)
            else:
                self.send(200, data, ctype, "", extra)

        def send(
            self, status: int, data: bytes, ctype: str, coding: str = "", extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            if coding:
                self.send_header("Content-Encoding", coding)
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def stream(self, ctype: str, coding: str, pieces: Iterator[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Encoding", coding)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for piece in pieces:
                    if piece:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client hung up, as it should once its cap is reached
                self.close_connection = True

    loopback.serve(Handler)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tag", default="", help="ignored: lets a test find exactly its own processes")
    parser.add_argument("--only", default="", help="plant the fault in the answers to this method alone")
    parser.add_argument("mode", choices=sorted(MODES))
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve(args.mode, args.only)


if __name__ == "__main__":
    main()
