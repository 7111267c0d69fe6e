"""Per-call cost of the harness against a raw loop and against the `mcp` SDK Client, same server.

Why four contenders: the raw loop (blocking I/O) is the floor: what the server itself costs, plus one
JSON encode and decode. The raw asyncio loop is the same loop on asyncio's streams (stdio) or a default
httpx.AsyncClient (HTTP), so the gap between the two floors is the event loop's. Over HTTP the harness
can come in under that async floor: its adapter gives httpx's connection pool a network backend on
asyncio streams instead of anyio's (conformance/adapters/asyncio_net.py), and the row says which backend
it used. The SDK Client is what a user would otherwise script with. The harness adds a transcript, frame
classification and evidence to every call, and issue 14 allows it at most 1.1x the raw loop in every
revision and transport. All contenders call `echo` on the reference server
(`conformance_reference.base_server`) in alternating rounds. Start-up and handshakes are outside the
timed calls, and each contender warms up first. The table's milliseconds are medians of all calls of all
rounds; each ratio is the median of the per-round ratios, with their range for the raw loop beside it.

The raw loops send byte for byte the request the harness sends (same compact encoding, same `_meta`
with protocolVersion, clientCapabilities and clientInfo), so the server does the same work for all
and the difference is the client's alone.

Rows: every revision over stdio (the legacy ones after an initialize handshake, 2026-07-28 with its
per-request `_meta` and no handshake), and over Streamable HTTP: 2026-07-28 (one POST per call with
MCP-Protocol-Version, Mcp-Method and Mcp-Name) and the legacy revisions from 2025-03-26 (an
Mcp-Session-Id session; the server answers each POST as an SSE stream). 2024-11-05 over HTTP is the
old HTTP+SSE transport, which a raw POST loop does not speak, so it has no row. The SDK Client
negotiates the newest legacy revision itself whatever the row, so its column is a reference only.
`--revisions` narrows the rows.

A raw HTTP loop slower than 20 ms a call is flagged: that is a server-side stall (the reference once
left Nagle's algorithm on, and every request on a kept-alive connection waited about 40 ms for a
delayed ACK), and it would hide any client's cost.

    python bench/per_call.py [--calls 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from benchlib import PYTHON, Judged, PartResult, alternate, heading, kill_group, median, reference_http

from conformance.protocol.session import CLIENT_INFO as HARNESS_CLIENT_INFO
from conformance.protocol.versions import FIRST_PROTOCOL_HEADER, TESTED_REVISIONS, at_least, era_of

SERVER = [PYTHON, "-m", "conformance_reference.base_server"]
LEGACY, MODERN = "2025-11-25", "2026-07-28"
OLD_HTTP = "2024-11-05"
WARMUP = 10
#: Seconds one contender's round may take before its server is killed (a hang must not stall the bench).
ROUND_TIMEOUT = 120.0
#: Seconds a server may take to give its first answer: the reference imports the SDK, about 1.5 s of CPU,
#: which a loaded 2-core machine stretches past the per-call timeout.
START_TIMEOUT = 60.0
TARGET_RATIO = 1.1
ARGS = {"text": "hello"}


def _meta(revision: str) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": HARNESS_CLIENT_INFO,
    }


def _encode(message: dict[str, Any]) -> bytes:
    """The harness's wire form (compact, UTF-8), so raw and harness put the same bytes on the wire."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def _call_message(msg_id: int, revision: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": ARGS}
    if era_of(revision) == "modern":
        params["_meta"] = _meta(revision)
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def _check_echo(response: Any, msg_id: int) -> None:
    """Every contender must really get the answer: a loop that reads garbage fast proves nothing."""
    if response.get("id") != msg_id or response["result"]["structuredContent"] != ARGS:
        raise RuntimeError(f"unexpected answer to call {msg_id}: {str(response)[:200]}")


#: Messages a raw loop reads past before the answer: the reference's echo logs (a notifications/message
#: before its answer), and a loop that took a notification for the answer would compare nothing.
MAX_BEFORE_ANSWER = 16


def _is_answer(message: Any) -> bool:
    """A JSON-RPC response (it has an id and a result or error), not a notification or request."""
    return isinstance(message, dict) and "id" in message and ("result" in message or "error" in message)


def _read_answer(readline: Any) -> Any:
    """The next response from a blocking line reader, skipping the notifications before it (bounded)."""
    for _ in range(MAX_BEFORE_ANSWER):
        message = json.loads(readline())
        if _is_answer(message):
            return message
    raise RuntimeError(f"no answer within {MAX_BEFORE_ANSWER} messages")


# --------------------------------------------------------------------------- stdio


def raw_stdio(calls: int, revision: str) -> list[float]:
    """The floor on stdio: write a JSON line to the server's stdin, read one line from its stdout."""
    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    # Blocking reads have no timeout of their own: a watchdog kills a server that stops answering,
    # so readline returns EOF and the round fails instead of hanging.
    watchdog = threading.Timer(ROUND_TIMEOUT, kill_group, (proc, 0.5))
    watchdog.start()
    try:

        def send(message: dict[str, Any]) -> None:
            stdin.write(_encode(message) + b"\n")
            stdin.flush()

        if era_of(revision) == "legacy":
            init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": HARNESS_CLIENT_INFO}
            send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            _read_answer(stdout.readline)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for i in range(1, WARMUP + calls + 1):
            started = time.perf_counter()
            send(_call_message(i, revision))
            _check_echo(_read_answer(stdout.readline), i)
            times.append(time.perf_counter() - started)
        return times[WARMUP:]
    finally:
        watchdog.cancel()
        kill_group(proc, grace=1.0)


def raw_async_stdio(calls: int, revision: str) -> list[float]:
    """The same loop on asyncio's subprocess streams: the floor for any asyncio client, the harness's kind."""

    async def go() -> list[float]:
        proc = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        async def send(message: dict[str, Any]) -> None:
            stdin.write(_encode(message) + b"\n")
            await stdin.drain()

        try:
            if era_of(revision) == "legacy":
                init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": HARNESS_CLIENT_INFO}
                await send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
                await asyncio.wait_for(stdout.readline(), START_TIMEOUT)
                await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            times = []
            for i in range(1, WARMUP + calls + 1):
                started = time.perf_counter()
                await send(_call_message(i, revision))
                for _ in range(MAX_BEFORE_ANSWER):
                    line = await asyncio.wait_for(stdout.readline(), 10 if i > 1 else START_TIMEOUT)
                    if _is_answer(answer := json.loads(line)):
                        break
                _check_echo(answer, i)
                times.append(time.perf_counter() - started)
            return times[WARMUP:]
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.wait_for(proc.wait(), 5)

    return asyncio.run(go())


async def _harness(adapter: Any, calls: int, revision: str) -> list[float]:
    """The same calls through the harness: adapter, transcript, session, frame classification."""
    from conformance.protocol.session import Session

    await adapter.start()
    session = Session(adapter, revision, timeout=10, opening_timeout=START_TIMEOUT)
    try:
        await session.open()
        times = []
        for _ in range(WARMUP + calls):
            started = time.perf_counter()
            call = await session.request("tools/call", {"name": "echo", "arguments": ARGS})
            _check_echo(call.response, call.request["id"] if call.request else -1)
            times.append(time.perf_counter() - started)
        return times[WARMUP:]
    finally:
        await session.close()


def harness_stdio(calls: int, revision: str) -> list[float]:
    from conformance.adapters.stdio import StdioAdapter
    from conformance.adapters.transcript import Transcript

    return asyncio.run(_harness(StdioAdapter(SERVER, Transcript()), calls, revision))


async def _sdk(server: Any, calls: int, revision: str) -> list[float]:
    """The `mcp` SDK's high-level Client, response cache off, calling the same tool the same way."""
    from mcp import Client

    mode = "legacy" if era_of(revision) == "legacy" else revision
    async with Client(server, mode=mode, cache=None, read_timeout_seconds=START_TIMEOUT) as client:
        times = []
        for _ in range(WARMUP + calls):
            started = time.perf_counter()
            result = await client.call_tool("echo", ARGS)
            if result.is_error or result.structured_content != ARGS:
                raise RuntimeError(f"SDK call failed: {result}")
            times.append(time.perf_counter() - started)
        return times[WARMUP:]


def sdk_stdio(calls: int, revision: str) -> list[float]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])

    async def run() -> list[float]:
        with open(os.devnull, "w") as devnull:
            return await _sdk(stdio_client(params, errlog=devnull), calls, revision)

    return asyncio.run(run())


# --------------------------------------------------------------------------- HTTP


def raw_http(url: str, calls: int, revision: str) -> list[float]:
    """The floor on HTTP: a plain httpx POST loop with the headers the revision asks for.

    TCP_NODELAY on the client socket: without it httpx's separate header and body writes meet
    Nagle's algorithm too, and the floor would not be a floor.
    """
    import socket

    import httpx

    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(transport=transport, trust_env=False, timeout=10.0, follow_redirects=False) as client:
        if era_of(revision) == "modern":
            headers.update({"MCP-Protocol-Version": revision, "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        else:
            init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": HARNESS_CLIENT_INFO}
            message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
            resp = client.post(url, content=_encode(message), headers=headers)
            headers["Mcp-Session-Id"] = resp.headers["mcp-session-id"]
            if at_least(revision, FIRST_PROTOCOL_HEADER):
                headers["MCP-Protocol-Version"] = revision
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            client.post(url, content=_encode(note), headers=headers)
        times = []
        try:
            for i in range(1, WARMUP + calls + 1):
                started = time.perf_counter()
                resp = client.post(url, content=_encode(_call_message(i, revision)), headers=headers)
                _check_echo(json.loads(_body_message(resp)), i)
                times.append(time.perf_counter() - started)
        finally:
            if "Mcp-Session-Id" in headers:
                with contextlib.suppress(httpx.HTTPError):
                    client.delete(url, headers=headers)
        return times[WARMUP:]


def raw_async_http(url: str, calls: int, revision: str) -> list[float]:
    """The same POST loop on httpx.AsyncClient: the floor for any asyncio HTTP client, the harness's kind."""
    import httpx

    async def go() -> list[float]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(trust_env=False, timeout=10.0, follow_redirects=False) as client:
            if era_of(revision) == "modern":
                headers.update(
                    {"MCP-Protocol-Version": revision, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
                )
            else:
                init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": HARNESS_CLIENT_INFO}
                message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
                resp = await client.post(url, content=_encode(message), headers=headers)
                headers["Mcp-Session-Id"] = resp.headers["mcp-session-id"]
                if at_least(revision, FIRST_PROTOCOL_HEADER):
                    headers["MCP-Protocol-Version"] = revision
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await client.post(url, content=_encode(note), headers=headers)
            times = []
            try:
                for i in range(1, WARMUP + calls + 1):
                    started = time.perf_counter()
                    body = _encode(_call_message(i, revision))
                    resp = await client.post(url, content=body, headers=headers)
                    _check_echo(json.loads(_body_message(resp)), i)
                    times.append(time.perf_counter() - started)
            finally:
                if "Mcp-Session-Id" in headers:
                    with contextlib.suppress(httpx.HTTPError):
                        await client.delete(url, headers=headers)
            return times[WARMUP:]

    return asyncio.run(go())


def _body_message(resp: Any) -> str:
    """The JSON-RPC response of an HTTP answer: the body itself, or the data line of the SSE event that
    carries the response (a log notification may come first on the stream)."""
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        for line in resp.text.splitlines():
            if line.startswith("data:") and _is_answer(json.loads(line[5:].strip() or "null")):
                return str(line[5:].strip())
        raise RuntimeError("an SSE answer without a response")
    return str(resp.text)


def harness_http(url: str, calls: int, revision: str) -> list[float]:
    from conformance.adapters.http import HttpAdapter
    from conformance.adapters.transcript import Transcript

    adapter = HttpAdapter(url, Transcript())
    times = asyncio.run(_harness(adapter, calls, revision))
    if adapter.network_backend != "asyncio":
        print(f"  note: the harness ran on httpcore's {adapter.network_backend} backend", file=sys.stderr)
    return times


def sdk_http(url: str, calls: int, revision: str) -> list[float]:
    return asyncio.run(_sdk(url, calls, revision))


# --------------------------------------------------------------------------- the part


def _contenders(transport: str, url: str, calls: int, revision: str) -> dict[str, Callable[[], list[float]]]:
    if transport == "stdio":
        return {
            "raw": lambda: raw_stdio(calls, revision),
            "raw_async": lambda: raw_async_stdio(calls, revision),
            "harness": lambda: harness_stdio(calls, revision),
            "sdk": lambda: sdk_stdio(calls, revision),
        }
    return {
        "raw": lambda: raw_http(url, calls, revision),
        "raw_async": lambda: raw_async_http(url, calls, revision),
        "harness": lambda: harness_http(url, calls, revision),
        "sdk": lambda: sdk_http(url, calls, revision),
    }


def _round_ratio(harness: list[list[float]], other: list[list[float]]) -> tuple[float, str]:
    """The median over rounds of harness/other per-call medians, and the range of those ratios."""
    per_round = sorted(median(h) / median(o) for h, o in zip(harness, other, strict=True))
    return median(per_round), f"{per_round[0]:.2f}-{per_round[-1]:.2f}"


#: A raw loop slower than this per call is stalled by the server, not measuring any client.
STALL_S = 0.02


def run(calls: int = 200, rounds: int = 5, revisions: tuple[str, ...] = TESTED_REVISIONS) -> PartResult:
    part = PartResult("per-call overhead")
    heading(f"per-call tools/call on the reference server: {rounds} alternating rounds x {calls} calls")
    print(
        f"  {'transport@revision':20} {'raw':>10} {'raw async':>10} {'harness':>10} {'SDK Client':>10}"
        "  harness/raw  harness/async  harness/SDK"
    )
    # 2024-11-05 over HTTP is the old HTTP+SSE transport, which no raw POST loop speaks: not timed here.
    rows = [("stdio", r) for r in revisions] + [("http", r) for r in revisions if r != OLD_HTTP]
    with reference_http() as url:
        for transport, revision in rows:
            pooled = alternate(rounds, _contenders(transport, url, calls, revision))
            med = {name: median([t for r in runs for t in r]) for name, runs in pooled.items()}
            # Ratios are medians of per-round ratios: within a round the contenders ran seconds apart, and
            # one round that a neighbour's burst slowed for one contender cannot move the median.
            ratios = {
                other: _round_ratio(pooled["harness"], pooled[other]) for other in ("raw", "raw_async", "sdk")
            }
            ratio, vs_async, vs_sdk = (ratios[k][0] for k in ("raw", "raw_async", "sdk"))
            spread = ratios["raw"][1]
            label = transport + "@" + revision
            print(
                f"  {label:20} {med['raw'] * 1e3:7.3f} ms {med['raw_async'] * 1e3:7.3f} ms"
                f" {med['harness'] * 1e3:7.3f} ms {med['sdk'] * 1e3:7.3f} ms"
                f"  {ratio:10.2f}x  {vs_async:12.2f}x  {vs_sdk:10.2f}x"
                f"   (rounds {spread})",
                flush=True,
            )
            if med["raw"] > STALL_S:
                print(
                    f"  {'':20} ! the raw loop itself takes {med['raw'] * 1e3:.1f} ms a call: the server"
                    " stalls (Nagle's algorithm against a delayed ACK?), so these ratios say little"
                )
            part.judged.append(
                Judged(
                    f"harness <= {TARGET_RATIO}x raw per call, {transport}@{revision}",
                    f"{ratio:.2f}x raw ({med['harness'] * 1e3:.3f} vs {med['raw'] * 1e3:.3f} ms);"
                    f" {vs_async:.2f}x a raw asyncio loop; {vs_sdk:.2f}x the SDK Client",
                    ratio <= TARGET_RATIO,
                )
            )
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--revisions", default=",".join(TESTED_REVISIONS), help="comma-separated revisions")
    args = parser.parse_args()
    run(args.calls, args.rounds, tuple(args.revisions.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
