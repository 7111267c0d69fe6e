"""A real server no one here wrote: `mcp-server-time` from PyPI, judged by the base suite.

It passes everything except two JSON-RPC 2.0 rules, in every revision: a line of invalid JSON and a
request whose method is a number get no answer at all (JSON-RPC 2.0 §5 requires an error response with
-32700 / -32600). Those are real defects of the SDK's stdio server loop, which drops lines it cannot
parse; the project's reference server answers them. Its tools need real time zones: the arguments built
from each inputSchema take them from the descriptions ("e.g., 'America/New_York'"), so both tools
succeed and their structured output is judged. It offers no resource to read.
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
    report = run([f"stdio:{sys.executable} -m mcp_server_time"])
    target = report["targets"][0]
    assert target["server_info"]["name"] == "mcp-time"
    assert target["revisions_spoken"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert non_pass(report) == {
        ("base.rpc.parse-error", "FAIL"),
        ("base.rpc.invalid-request", "FAIL"),
        ("base.resources.read-shape", "SKIP"),
    }
    structured = [c for c in report["cases"] if c["check"].startswith("base.call.")]
    judged = [
        c for c in structured if c["requirement"] in ("BASE-CALL-001", "BASE-CALL-002", "BASE-CALL-003")
    ]
    assert len(judged) == 9 and all(c["verdict"] == "PASS" for c in judged)
    assert all(
        "judged on 2 successful call(s): get_current_time, convert_time" in c["message"] for c in judged
    )
    for case in report["cases"]:
        if case["verdict"] == "FAIL":
            assert case["message"].startswith("no answer within"), case["message"]
            # The server was still alive and answering afterwards: a verdict, not an outage.
            assert not any(c["verdict"] == "ERROR" for c in report["cases"])
