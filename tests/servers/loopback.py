"""What every hostile HTTP test server shares: serving one handler class on 127.0.0.1 (an ephemeral
port, announced as the reference servers do with `LISTENING <url>`) and writing one whole answer."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(handler: type[BaseHTTPRequestHandler]) -> None:
    """Serve `handler` on 127.0.0.1 only, a thread per connection, until the harness kills us."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    print(f"LISTENING http://127.0.0.1:{httpd.server_address[1]}/mcp", flush=True)
    httpd.serve_forever()


def send(handler: BaseHTTPRequestHandler, status: int, data: bytes, ctype: str = "application/json") -> None:
    """One whole answer with its length."""
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
