"""Spare server processes (`SessionPool.prewarm`): used when planned, never leaked, never over HTTP.

A check that declares `fresh_sessions` gets a stdio server process booted ahead of it, so the base
suite does not wait out an SDK server's start-up inside a handshake probe. These tests hold the
pool to its promises with real processes: the spare is the one handed out (its start shows in the
case that uses it), the next one boots as the first is taken, unused spares die with the pool, and
an HTTP target boots nothing.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
import uuid
from pathlib import Path

from conformance.adapters.transcript import Transcript
from conformance.engine.sessions import SessionPool
from conformance.model.targets import parse_target
from tests.conftest import run, stdio

#: A stdio "server" that only sleeps: the pool starts transports, it does not talk to them here.
SLEEPER = "import time; time.sleep(60)"


def _tagged(tag: str) -> list[int]:
    """Live processes whose command line carries `tag`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if tag.encode() in argv:
                found.append(int(entry.name))
    return found


def _running(tag: str, count: int, within: float = 60.0) -> bool:
    """Whether exactly `count` processes carry `tag`, waiting up to `within` seconds: a child shows
    its own command line only once it has exec'd, a moment after the spawn returned (polled, so the
    generous bound costs nothing on an idle machine and holds on a busy one)."""
    deadline = time.monotonic() + within
    while len(_tagged(tag)) != count and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(_tagged(tag)) == count


def _gone(tag: str, within: float = 60.0) -> bool:
    """Whether every process carrying `tag` has exited within `within` seconds."""
    return _running(tag, 0, within)


def _pool(tag: str) -> SessionPool:
    target = parse_target("stdio:" + shlex.join([sys.executable, "-c", SLEEPER, tag]))
    return SessionPool(target, "2025-11-25", Transcript(), timeout=5.0)


async def _booted(pool: SessionPool) -> None:
    await asyncio.wait_for(asyncio.gather(*pool.spares), 120)


def test_the_spare_is_handed_out_and_the_next_one_boots() -> None:
    tag = f"spare-{uuid.uuid4().hex}"

    async def go() -> None:
        pool = _pool(tag)
        pool.prewarm(2)
        try:
            assert len(pool.spares) == 1, "one spare at a time"
            await _booted(pool)
            assert _running(tag, 1)
            mark = pool.transcript.mark()
            first = await pool.fresh_unopened(use_spare=True)
            started = pool.transcript.since(mark)
            assert started and started[0].get("ahead") is True and "started pid" in started[0]["note"]
            assert first.adapter.transcript is pool.transcript, "the spare now writes the pool's log"
            assert len(pool.spares) == 1, "taking the first spare boots the second"
            await _booted(pool)
            await pool.fresh_unopened(use_spare=True)
            assert pool.spares == [] and pool.planned == 0, "nothing more planned, nothing booted"
            assert _running(tag, 2)
        finally:
            await pool.close()

    asyncio.run(go())
    assert _gone(tag)


def test_only_checks_that_declared_them_get_spares() -> None:
    tag = f"spare-{uuid.uuid4().hex}"

    async def go() -> None:
        pool = _pool(tag)
        pool.prewarm(1)
        try:
            await _booted(pool)
            spare = pool.spares[0]
            mark = pool.transcript.mark()
            await pool.fresh_unopened()  # a race, say: a process of its own, started now
            assert pool.spares == [spare] and pool.planned == 1
            assert not any(e.get("ahead") for e in pool.transcript.since(mark))
            assert _running(tag, 2)
        finally:
            await pool.close()

    asyncio.run(go())
    assert _gone(tag)


def test_unused_spares_die_with_the_pool() -> None:
    tag = f"spare-{uuid.uuid4().hex}"

    async def go() -> None:
        pool = _pool(tag)
        pool.prewarm(3)
        await _booted(pool)
        assert _running(tag, 1)
        await pool.close()

    asyncio.run(go())
    assert _gone(tag)


def test_a_spare_still_booting_is_stopped_on_close() -> None:
    tag = f"spare-{uuid.uuid4().hex}"

    async def go() -> None:
        pool = _pool(tag)
        pool.prewarm(1)
        await pool.close()  # at once: the spare's task is cancelled, or its process is stopped
        assert pool.spares == []

    asyncio.run(go())
    assert _gone(tag)


def test_http_targets_boot_nothing_ahead() -> None:
    pool = SessionPool(parse_target("http://127.0.0.1:9/mcp"), "2025-11-25", Transcript(), timeout=5.0)
    pool.prewarm(2)
    assert pool.spares == []


def _started(case: dict[str, object]) -> dict[str, object]:
    """The event of the case's own server process starting (the pool's `started pid` note)."""
    entries = case["transcript"]
    assert isinstance(entries, list)
    return next(e for e in entries if "started pid" in str(e.get("note", "")))


def test_a_handshake_probe_runs_on_a_spare_with_the_same_verdicts() -> None:
    reports = [
        run(
            [stdio("conformance_reference.base_server")],
            select="base.lifecycle",
            protocol="2025-11-25",
            keep_transcripts=True,
            jobs=jobs,
        )
        for jobs in (2, 1)
    ]
    ahead, on_demand = ({c["check"]: c for c in report["cases"]} for report in reports)
    assert {c["verdict"] for c in ahead.values()} == {"PASS"}
    assert {k: c["verdict"] for k, c in ahead.items()} == {k: c["verdict"] for k, c in on_demand.items()}
    assert _started(ahead["base.lifecycle.ping-during-initialize"]).get("ahead") is True
    # With -j 1 one server process starts at a time, so nothing is booted ahead of its case.
    assert _started(on_demand["base.lifecycle.ping-during-initialize"]).get("ahead") is None
