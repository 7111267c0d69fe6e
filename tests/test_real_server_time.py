"""A real server no one here wrote: `mcp-server-time` from PyPI, judged by the base suite.

It passes everything, in every revision, and WARNs on two JSON-RPC 2.0 rules: a line of invalid JSON and
a request whose method is a number get no answer at all (JSON-RPC 2.0 defines -32700 / -32600 for them).
MCP requires no answer to a line that is not a message on stdio and no official SDK sends one (the SDK's
stdio loop drops lines it cannot parse), so that is a WARN, a FAIL only under --strict. Its tools need
real time zones, which the suite's generic example input cannot guess, so the structured-output checks
are SKIP (no successful call), and it offers no resource to read.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import non_pass, run

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None, reason="mcp-server-time is not installed"
)


def test_mcp_server_time_fails_only_on_its_real_defects() -> None:
    report = run([f"stdio:{sys.executable} -m mcp_server_time"], timeout=30.0)  # busy machines start slowly
    target = report["targets"][0]
    assert target["server_info"]["name"] == "mcp-time"
    assert target["revisions_spoken"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert non_pass(report) == {
        ("base.rpc.parse-error", "WARN"),
        ("base.rpc.invalid-request", "WARN"),
        ("base.call.structured-matches-schema", "SKIP"),
        ("base.call.text-mirror-present", "SKIP"),
        ("base.call.text-mirror-equal", "SKIP"),
        ("base.resources.read-shape", "SKIP"),
    }
    assert report["footer"]["exit_code"] == 0
    for case in report["cases"]:
        if case["check"] in ("base.rpc.parse-error", "base.rpc.invalid-request"):
            # The server still answered the sentinel sent after each probe: ignored, not hung.
            assert case["message"].startswith("no answer to `"), case["message"]
            assert "after it was answered" in case["message"]
