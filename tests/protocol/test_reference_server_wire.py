"""Raw-wire tests of the reference server, run as a real subprocess.

Why: the reference server is the harness's default target and must be
conformant on the wire itself, not merely through an SDK client that would
paper over framing, headers or status codes. These tests speak raw JSON-RPC
(newline-delimited over stdio, plain POSTs over HTTP) and pin the frames a
strict harness sees in both protocol eras. Every wait is bounded and every
process is killed on the way out, so a hung server fails a test instead of
hanging the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests import hostile

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE = "conformance_reference.base_server"
MODERN = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
}
TOOL_ORDER = ["echo", "add", "reverse", "now", "fail_politely", "ask_for_input", "count"]
#: Bounds on waits for something that must come (a frame, an answer, an exit, the LISTENING line):
#: generous, since a busy machine can take seconds to start the SDK server; nothing waits them out.
WAIT = 60.0
STARTUP_WAIT = 120.0
ACCEPT = "application/json, text/event-stream"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _spawn(args: list[str], stderr: IO[bytes], *, stdio: bool) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", MODULE, *args],
        cwd=REPO_ROOT,
        env=_env(),
        stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End the server: EOF on stdin (ends a stdio server), then SIGTERM, then SIGKILL, each step bounded."""
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)
    if proc.poll() is None:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=3)
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=3)


class StdioPeer:
    """A raw newline-delimited JSON-RPC client on the server's stdin/stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._stdin = proc.stdin
        self._lines = hostile.line_queue(proc.stdout)

    def send_raw(self, text: str) -> None:
        self._stdin.write(text.encode("utf-8") + b"\n")
        self._stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message))

    def recv(self, timeout: float = WAIT) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no frame from the server within {timeout}s")
        if line is None:
            pytest.fail("server closed stdout")
        frame: dict[str, Any] = json.loads(line)
        return frame

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response, skipping any notifications in between."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + WAIT
        while True:
            frame = self.recv(timeout=max(0.01, deadline - time.monotonic()))
            if frame.get("id") == request_id and "method" not in frame:
                return frame


@pytest.fixture
def stdio_server(tmp_path: Path) -> Iterator[StdioPeer]:
    with (tmp_path / "stderr.log").open("wb") as stderr:
        proc = _spawn([], stderr, stdio=True)
        try:
            yield StdioPeer(proc)
        finally:
            _stop(proc)


def _start_http(era: str, stderr: IO[bytes]) -> tuple[subprocess.Popen[bytes], str]:
    proc = _spawn(["--http", "--port", "0", "--era", era], stderr, stdio=False)
    assert proc.stdout is not None
    lines = hostile.line_queue(proc.stdout)
    try:
        line = lines.get(timeout=STARTUP_WAIT)
    except queue.Empty:
        _stop(proc)
        pytest.fail(f"no LISTENING line within {STARTUP_WAIT}s")
    if line is None or not line.startswith(b"LISTENING http://127.0.0.1:"):
        _stop(proc)
        pytest.fail(f"unexpected startup line: {line!r}")
    return proc, line.decode().split()[1]


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with (tmp_path_factory.mktemp("http") / "stderr.log").open("wb") as stderr:
        proc, url = _start_http("both", stderr)
        try:
            yield url
        finally:
            _stop(proc)


def _modern_post(
    client: httpx.Client,
    url: str,
    request_id: int,
    method: str,
    params: dict[str, Any],
    overrides: dict[str, str] | None = None,
) -> httpx.Response:
    """POST one 2026-07-28 request with the standard headers, letting `overrides` replace them."""
    sent = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    name = params.get("name", params.get("uri"))
    if name is not None:
        sent["Mcp-Name"] = name
    sent.update(overrides or {})
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return client.post(url, content=json.dumps(body), headers=sent)


def _assert_structured(result: dict[str, Any], expected: dict[str, Any]) -> None:
    """Successful tool results carry structuredContent and exactly one text block of its compact JSON."""
    assert result["structuredContent"] == expected
    assert result.get("isError", False) is False
    assert result["content"] == [
        {"type": "text", "text": json.dumps(expected, separators=(",", ":"), ensure_ascii=False)}
    ]


def test_stdio_legacy_handshake_pagination_and_echo(stdio_server: StdioPeer) -> None:
    init = stdio_server.request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "0"},
        },
    )
    result = init["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "mcp-conformance-reference"
    assert "tools" in result["capabilities"] and "resources" in result["capabilities"]
    assert "resultType" not in result  # a 2026-07-28 field; never on a handshake-era result
    stdio_server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    names: list[str] = []
    cursor: str | None = None
    for page_number in range(10):
        params = {"cursor": cursor} if cursor is not None else None
        page = stdio_server.request(10 + page_number, "tools/list", params)["result"]
        assert 1 <= len(page["tools"]) <= 2
        for tool in page["tools"]:
            assert tool["inputSchema"]["type"] == "object"
            assert tool["inputSchema"]["additionalProperties"] is False
        names.extend(tool["name"] for tool in page["tools"])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert names == TOOL_ORDER

    bad_cursor = stdio_server.request(30, "tools/list", {"cursor": "not-a-cursor"})
    assert bad_cursor["error"]["code"] == -32602

    echo = stdio_server.request(31, "tools/call", {"name": "echo", "arguments": {"text": "héllo"}})
    _assert_structured(echo["result"], {"text": "héllo"})

    unknown = stdio_server.request(32, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert unknown["error"]["code"] == -32602

    # The SDK drops unparseable lines silently; the reference answers them as JSON-RPC requires.
    stdio_server.send_raw("{this is not json")
    assert stdio_server.recv() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_stdio_modern_discover_and_call(stdio_server: StdioPeer) -> None:
    discover = stdio_server.request(1, "server/discover", {"_meta": META})["result"]
    assert MODERN in discover["supportedVersions"]
    assert discover["resultType"] == "complete"
    assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-conformance-reference"

    echo = stdio_server.request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": META})
    assert echo["result"]["resultType"] == "complete"
    _assert_structured(echo["result"], {"text": "hi"})

    # 2025-11-25 onwards: schema violations are tool-execution errors, not protocol errors.
    invalid = stdio_server.request(3, "tools/call", {"name": "add", "arguments": {"a": 1}, "_meta": META})
    assert invalid["result"]["isError"] is True
    assert "structuredContent" not in invalid["result"]

    # 2026-07-28 (SEP-2164): resource not found is -32602, no longer -32002.
    missing = stdio_server.request(4, "resources/read", {"uri": "ref://nope", "_meta": META})
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"] == {"uri": "ref://nope"}


def test_http_modern_request_with_standard_headers(http_url: str) -> None:
    with httpx.Client(timeout=WAIT) as client:
        discover = _modern_post(client, http_url, 1, "server/discover", {"_meta": META})
        assert discover.status_code == 200
        assert discover.headers["content-type"].startswith("application/json")
        assert "mcp-session-id" not in discover.headers
        assert MODERN in discover.json()["result"]["supportedVersions"]

        call = _modern_post(
            client,
            http_url,
            2,
            "tools/call",
            {"name": "reverse", "arguments": {"text": "abc"}, "_meta": META},
        )
        assert call.status_code == 200
        body = call.json()
        assert body["id"] == 2
        assert body["result"]["resultType"] == "complete"
        _assert_structured(body["result"], {"text": "cba"})


@pytest.mark.parametrize(
    ("headers", "meta_version"),
    [
        pytest.param({}, "2025-11-25", id="header-modern-meta-legacy"),
        pytest.param({"MCP-Protocol-Version": "2025-11-25"}, MODERN, id="header-legacy-meta-modern"),
        pytest.param({"Mcp-Name": "reverse"}, MODERN, id="mcp-name-differs"),
    ],
)
def test_http_header_mismatch_is_400_header_mismatch(
    http_url: str, headers: dict[str, str], meta_version: str
) -> None:
    params = {
        "name": "echo",
        "arguments": {"text": "x"},
        "_meta": {**META, "io.modelcontextprotocol/protocolVersion": meta_version},
    }
    with httpx.Client(timeout=WAIT) as client:
        response = _modern_post(client, http_url, 7, "tools/call", params, headers)
    assert response.status_code == 400
    body = response.json()
    assert body["id"] == 7
    assert body["error"]["code"] == -32020


def test_http_modern_only_server_refuses_get_and_initialize(tmp_path: Path) -> None:
    with (tmp_path / "stderr.log").open("wb") as stderr:
        proc, url = _start_http("modern", stderr)
        try:
            with httpx.Client(timeout=WAIT) as client:
                get = client.get(url, headers={"Accept": "text/event-stream"})
                assert get.status_code == 405
                assert get.headers["allow"] == "POST"

                init = client.post(
                    url,
                    json={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "t", "version": "0"},
                        },
                    },
                    headers={"Accept": ACCEPT},
                )
                assert init.status_code == 400
                error = init.json()["error"]
                assert error["code"] == -32022
                assert error["data"]["supported"] == [MODERN]
                assert "mcp-session-id" not in init.headers
            proc.terminate()
            assert proc.wait(timeout=WAIT) == 0  # SIGTERM is a clean shutdown
        finally:
            _stop(proc)
