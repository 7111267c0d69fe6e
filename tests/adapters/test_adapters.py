"""Adapters against real processes and servers: caps, timeouts, process groups, the legacy SSE transport."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from conformance.adapters.base import NO_RESPONSE, TransportClosed, TransportTimeout, TransportTooLarge
from conformance.adapters.sse_parse import SseParser
from conformance.adapters.stdio import StdioAdapter
from conformance.adapters.transcript import Transcript
from tests.conftest import non_pass, run


def _adapter(code: str, **kwargs: object) -> StdioAdapter:
    return StdioAdapter([sys.executable, "-c", code], Transcript(), **kwargs)  # type: ignore[arg-type]


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
ECHO = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}) + '\\n')\n"
    "    sys.stdout.flush()\n"
)


def test_oversize_message_is_discarded_and_fails_fast() -> None:
    code = (
        "import sys\nsys.stdin.readline()\nsys.stdout.write('x' * 300000 + '\\n')\nsys.stdout.flush()\n"
        + ECHO
    )

    async def go() -> None:
        adapter = _adapter(code, max_message_bytes=100_000)
        await adapter.start()
        try:
            started = time.monotonic()
            with pytest.raises(TransportTooLarge, match="exceeded the 100000-byte cap"):
                await adapter.exchange(PING, expect_id=1, timeout=600)
            # Failing fast: well within the timeout, however busy the machine (no fixed few seconds).
            assert time.monotonic() - started < 300, "no need to wait out the timeout"
            assert adapter.garbage_frames == 1
            reply = await adapter.exchange(PING.replace(b'"id":1', b'"id":2'), expect_id=2, timeout=60)
            assert reply.response is not None and reply.response.value["id"] == 2
        finally:
            await adapter.close()

    asyncio.run(go())


#: Far longer than these tests take: an exchange that raises anything but a timeout did not wait it out.
NEVER = 600.0


def test_a_line_past_the_cap_is_said_at_once_though_it_never_ends() -> None:
    """300 KB with no newline, then silence: the answer is refused as soon as it passes the cap, not
    when it ends (it never does) and not at the timeout."""
    code = (
        "import sys, time\nsys.stdin.readline()\n"
        "sys.stdout.write('x' * 300000)\nsys.stdout.flush()\ntime.sleep(300)\n"
    )

    async def go() -> None:
        adapter = _adapter(code, max_message_bytes=100_000)
        await adapter.start()
        try:
            with pytest.raises(TransportTooLarge, match="exceeded the 100000-byte cap"):
                await adapter.exchange(PING, expect_id=1, timeout=NEVER)
        finally:
            await adapter.close()

    asyncio.run(go())


def test_a_server_gone_while_a_stray_holds_its_stdout_ends_the_stream(tmp_path: Path) -> None:
    """The server starts a child in a session of its own that keeps stdout open, then exits: the stream
    never ends by itself, so the exit ends it (a closed stream, at once), not the timeout."""
    code = (
        "import os, subprocess, sys\nsys.stdin.readline()\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(300)'])\n"
        "os._exit(0)\n"
    )

    async def go() -> None:
        adapter = _adapter(code)
        await adapter.start()
        try:
            with pytest.raises(TransportClosed, match="holds its stdout open"):
                await adapter.exchange(PING, expect_id=1, timeout=NEVER)
        finally:
            await adapter.close()  # kills the stray too (tagged)

    asyncio.run(go())


def test_timeout_fires_and_close_kills_the_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)\n"
    )

    async def go() -> int:
        adapter = _adapter(code)
        await adapter.start()
        # The grandchild exists once its pid is written: wait for that (an event, however slow the
        # machine), so the close below has a whole group to kill.
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(TransportTimeout):
            await adapter.exchange(PING, expect_id=1, timeout=1.0)
        assert time.monotonic() - started < 120, "the timeout fired, not the server's 300 s sleep"
        await adapter.close()
        return int(marker.read_text())

    child = asyncio.run(go())
    deadline = time.monotonic() + 60  # polled: an idle machine sees the grandchild gone at once
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"grandchild {child} survived the close: an orphan")


def test_stderr_flood_is_kept_as_a_bounded_tail() -> None:
    code = "import sys\nfor i in range(20000): sys.stderr.write('noise %d\\n' % i)\n" + ECHO

    async def go() -> None:
        adapter = _adapter(code)
        await adapter.start()
        try:
            reply = await adapter.exchange(
                b'{"jsonrpc":"2.0","id":1,"method":"ping"}', expect_id=1, timeout=60
            )
            assert reply.response is not None
            # The flood was written before the answer; its reading may lag behind on a busy machine.
            deadline = time.monotonic() + 60
            while adapter.stderr_bytes <= 100_000 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert adapter.stderr_bytes > 100_000
            assert len(adapter.stderr_tail(10_000)) <= 10_000
        finally:
            await adapter.close()

    asyncio.run(go())


def test_notification_is_not_awaited() -> None:
    async def go() -> None:
        adapter = _adapter(ECHO)
        await adapter.start()
        try:
            reply = await adapter.exchange(
                b'{"jsonrpc":"2.0","method":"x"}', expect_id=NO_RESPONSE, timeout=1
            )
            assert reply.response is None
        finally:
            await adapter.close()

    asyncio.run(go())


def test_a_reply_without_an_id_answers_no_request() -> None:
    """A server that answers a request with a reply that has no id (or id null) first, then with its
    real answer: the request's answer is the one with its id, and the id-less replies stay frames.
    Where no real answer comes, the timeout says what came instead."""
    code = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    for stray in ({'jsonrpc': '2.0', 'error': {'code': -32601, 'message': 'no'}},\n"
        "                  {'jsonrpc': '2.0', 'id': None, 'result': {}}):\n"
        "        sys.stdout.write(json.dumps(stray) + '\\n')\n"
        "    if m['id'] == 1:\n"
        "        real = {'jsonrpc': '2.0', 'id': 1, 'result': {'real': True}}\n"
        "        sys.stdout.write(json.dumps(real) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )

    async def go() -> None:
        adapter = _adapter(code)
        await adapter.start()
        try:
            reply = await adapter.exchange(PING, expect_id=1, timeout=60)
            assert reply.response is not None and reply.response.value == {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"real": True},
            }
            assert [f.idless_reply for f in reply.frames] == [True, True, False]
            # Request 2 draws only replies without an id: it is unanswered, and the timeout says why.
            with pytest.raises(TransportTimeout, match="2 replies without an id came") as raised:
                await adapter.exchange(PING.replace(b'"id":1', b'"id":2'), expect_id=2, timeout=2)
            assert '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "no"}}' in str(raised.value)
        finally:
            await adapter.close()

    asyncio.run(go())


def test_exchange_until_stops_at_the_sign_and_the_late_answer_is_stale() -> None:
    # The server reports progress on request 1, then answers it only once the next line arrives, just
    # before it answers that line: the late answer must not be taken for request 2's.
    code = (
        "import sys, json\n"
        "m = json.loads(sys.stdin.readline())\n"
        "note = {'jsonrpc': '2.0', 'method': 'notifications/progress', 'params': {'progress': 1}}\n"
        "sys.stdout.write(json.dumps(note) + '\\n'); sys.stdout.flush()\n"
        "n = json.loads(sys.stdin.readline())\n"
        "for i in (m['id'], n['id']):\n"
        "    sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': i, 'result': {'for': i}}) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )

    async def go() -> None:
        adapter = _adapter(code, max_message_bytes=100_000)
        await adapter.start()
        try:
            reply = await adapter.exchange_until(
                PING,
                expect_id=1,
                until=lambda frame: frame.value.get("method") == "notifications/progress",
                timeout=60,
            )
            assert reply.response is None
            assert [f.value["method"] for f in reply.frames] == ["notifications/progress"]
            second = await adapter.exchange(PING.replace(b'"id":1', b'"id":2'), expect_id=2, timeout=60)
            assert second.response is not None and second.response.value["result"] == {"for": 2}
            assert [f.extra.get("stale") for f in second.frames] == [True, None]
        finally:
            await adapter.close()

    asyncio.run(go())


def test_answers_out_of_order_are_kept_in_order_and_read_by_id() -> None:
    """Three requests, the first two written without waiting (as an early ping is): the server answers
    all three in reverse order in one write. The awaited one's wait ends at its own answer, so the two
    earlier answers are read after it, by the drain before the next send, between two waits: each is
    kept, in the order read, and found by its id (once dropped unread, they were lost). Nothing stale is
    taken for the next request's answer."""
    code = (
        "import sys, json\n"
        "ids = [json.loads(sys.stdin.readline())['id'] for _ in range(3)]\n"
        "sys.stdout.write(''.join(json.dumps({'jsonrpc': '2.0', 'id': i, 'result': {'for': i}}) + '\\n'\n"
        "                         for i in reversed(ids)))\n"
        "sys.stdout.flush()\n" + ECHO
    )

    def ping(msg_id: object) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "ping"}).encode()

    async def go() -> None:
        adapter = _adapter(code)
        await adapter.start()
        try:
            for early in ("early-a", "early-b"):
                await adapter.exchange(ping(early), expect_id=NO_RESPONSE, timeout=NEVER)
            adapter.unawaited("early-a", "early-b")
            third = await adapter.exchange(ping(3), expect_id=3, timeout=NEVER)
            assert third.response is not None and third.response.value["result"] == {"for": 3}
            fourth = await adapter.exchange(ping(4), expect_id=4, timeout=NEVER)
            assert fourth.response is not None and fourth.response.value["result"] == {}
            # Every answer read, whichever wait or drain read it, in order; each found by its id.
            assert [f.id for f in adapter._answers] == [3, "early-b", "early-a", 4]
            for msg_id in ("early-a", "early-b", 3, 4):
                found = adapter.answer_to(msg_id)
                assert found is not None and found.id == msg_id
            assert adapter.answer_to("3") is None and adapter.answer_to("early-c") is None
        finally:
            await adapter.close()

    asyncio.run(go())


def test_sse_parser_handles_crlf_comments_and_multiline_data() -> None:
    parser = SseParser(1000)
    events = list(parser.feed(b'event: endpoint\r\ndata: /m?s=1\r\n\r\n: ping\n\ndata: {"a"\ndata: :1}\n'))
    events += list(parser.feed(b"\n"))
    assert [(e.event, e.data) for e in events] == [("endpoint", b"/m?s=1"), ("message", b'{"a"\n:1}')]
    with pytest.raises(ValueError):
        list(SseParser(10).feed(b"data: " + b"x" * 20 + b"\n"))


def test_legacy_sse_transport_against_the_reference(tmp_path: Path) -> None:
    target = tmp_path / "sse.toml"
    command = [sys.executable, "-m", "conformance_reference.base_server", "--http", "--sse", "--port", "0"]
    target.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "sse"\n', encoding="utf-8")
    report = run([str(target)], protocol="2025-06-18")
    assert report["targets"][0]["transport"] == "sse"
    assert non_pass(report) == set()
