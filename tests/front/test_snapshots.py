"""Regression snapshots: the reference server's wire behaviour, recorded with syrupy, one file per case.

The recorded files live in tests/__snapshots__/test_snapshots/. They change when the reference
server or the base suite's rpc checks change what is said on the wire: re-record with
`python -m pytest tests/front/test_snapshots.py --snapshot-update` and review the diff like any code change.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.engine.context import RunOptions
from conformance.front.snapshots import TranscriptSnapshotExtension, assert_snapshots, normalise, record


def test_reference_server_wire_matches_its_snapshots(snapshot: Any) -> None:
    # The base suite's JSON-RPC checks, over stdio and Streamable HTTP, in every revision spoken.
    # A generous per-request timeout: the answers recorded do not depend on it; a busy machine is slow.
    cases = record(None, ("base",), select="base.rpc.", options=RunOptions(timeout=30.0))
    assert {key.split("[")[1].split("@")[0] for key in cases} == {"stdio", "http"}
    assert len(cases) >= 20
    assert_snapshots(snapshot, cases)


def test_two_recordings_are_identical() -> None:
    """Stable across runs: ports, pids, session ids, dates and clocks differ between these two."""
    options = RunOptions(timeout=30.0)
    first = record(None, ("base",), select="base.rpc.id-echo,base.call.", options=options)
    second = record(None, ("base",), select="base.rpc.id-echo,base.call.", options=options)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_normalise_masks_what_varies_and_keeps_what_the_server_said() -> None:
    entries: list[dict[str, Any]] = [
        {"t": 0.1, "dir": "event", "note": "launched pid 4242, listening at http://127.0.0.1:38211/mcp"},
        {
            "t": 0.2,
            "dir": "send",
            "channel": "POST http://127.0.0.1:38211/mcp",
            "text": '{"jsonrpc":"2.0","id":1007,"method":"tools/list"}',
            "headers": {"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"},
        },
        {
            "t": 0.3,
            "dir": "recv",
            "status": 200,
            "headers": {
                "Date": "Mon, 30 Nov 2026 06:00:00 GMT",
                "Content-Length": "88",
                "Content-Type": "x/y",
            },
            "text": '{"id":1007,"jsonrpc":"2.0",'
            '"result":{"z":1,"a":"at 2026-11-30T06:00:00Z","epoch_ms":1796020175958}}',
        },
        {
            "t": 0.4,
            "dir": "recv",
            "text": '{"jsonrpc":"2.0","id":"1007","error":{"code":-1,"message":"late"}}',
        },
        {"t": 0.5, "dir": "recv", "channel": "stdout", "text": "not json at all"},
    ]
    out = normalise(entries)
    assert all("t" not in e for e in out)
    assert out[0]["note"] == "launched pid <pid>, listening at http://127.0.0.1:<port>/mcp"
    assert out[1]["channel"] == "POST http://127.0.0.1:<port>/mcp"
    assert out[1]["headers"] == {"mcp-session-id": "<session 1>"}
    # The response echoes the request's id: the same token; a string id that looks alike is another.
    assert out[1]["json"]["id"] == out[2]["json"]["id"] == "<id 1: int>"
    assert out[3]["json"]["id"] == "<id 2: str>"
    assert out[2]["headers"] == {"date": "<date>", "content-length": "<length>", "content-type": "x/y"}
    assert out[2]["json"]["result"] == {"z": 1, "a": "at <time>", "epoch_ms": "<epoch>"}
    assert out[4] == {"dir": "recv", "channel": "stdout", "text": "not json at all"}
    stored = TranscriptSnapshotExtension().serialize({"case": "k", "transcript": out})
    assert stored.index('"a"') < stored.index('"z"'), "keys are sorted"


pytest_plugins = ["pytester"]

RECORDING_TEST = """
import os

from conformance.engine.context import RunOptions
from conformance.front.snapshots import assert_snapshots, record
from tests.conftest import stdio


def test_wire(snapshot):
    server = stdio("tests.servers.raw_server", "--defect", os.environ.get("RAW_DEFECT", "none"))
    assert_snapshots(snapshot, record([server], ["base"], select="rpc", options=RunOptions(timeout=30.0)))
"""


def test_snapshot_update_records_and_a_later_run_shows_the_drift(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_recorded=RECORDING_TEST)
    first = pytester.runpytest_subprocess("--snapshot-update", "-p", "no:cacheprovider", timeout=300)
    first.assert_outcomes(passed=1)
    files = sorted((pytester.path / "__snapshots__" / "test_recorded").iterdir())
    assert len(files) == 21 and all(f.name.endswith(".wire.json") for f in files)  # 7 checks x 3 revisions

    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    again.assert_outcomes(passed=1)

    monkeypatch.setenv("RAW_DEFECT", "wrong-id")
    drift = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-no-colors", timeout=300)
    drift.assert_outcomes(failed=1)
    output = drift.stdout.str()
    assert "cases drifted from their snapshots" in output
    assert "base.rpc.id-echo[stdio@2025-11-25]:" in output
