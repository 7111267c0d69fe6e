"""A case's reproduction (`conformance.reporting.reproduce`) sends the bytes the harness sent: pasted
into a shell against the same server, it shows the same defect (the raw server's id off by one), over
stdio (printf | command, with a legacy session's opening) and over HTTP (curl)."""

from __future__ import annotations

import base64
import json
import selectors
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.reporting import model
from conformance.reporting.model import Case, Report
from conformance.reporting.reproduce import reproduction
from tests.conftest import PY, REPO, cli

RAW = [PY, "-m", "tests.servers.raw_server"]


def report_of(spec: str, folder: Path) -> Report:
    result = cli("run", "--server", spec, "-k", "id-echo", "--quiet", "--report-dir", str(folder))
    assert result.returncode == 1, result.stdout + result.stderr
    return model.load(folder)


def run_shell(command: str, timeout: float = 60) -> bytes:
    """`command` through sh from the repo root, as a user pastes it: its stdout."""
    done = subprocess.run(["sh", "-c", command], cwd=REPO, capture_output=True, timeout=timeout)
    return done.stdout


def case_at(report: Report, revision: str) -> Case:
    return next(c for c in report.cases if c.revision == revision and c.check == "base.rpc.id-echo")


@pytest.fixture(scope="module")
def stdio_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    spec = "stdio:" + shlex.join([*RAW, "--defect", "wrong-id"])
    return report_of(spec, tmp_path_factory.mktemp("stdio"))


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18"])
def test_the_stdio_reproduction_shows_the_defect(stdio_report: Report, revision: str) -> None:
    case = case_at(stdio_report, revision)
    found = reproduction(case, stdio_report.targets[0], stdio_report.header.harness.version)
    assert found is not None and found.requests == 1
    (command,) = found.commands
    assert command.startswith("printf '%s\\n' ") and command.endswith(
        "| " + shlex.join(RAW) + " --defect wrong-id"
    )
    answers = [json.loads(line) for line in run_shell(command).splitlines()]
    assert answers[-1]["id"] == 1003, "the same wrong id the case judged"
    legacy = revision != "2026-07-28"
    assert (answers[0].get("result", {}).get("protocolVersion") == revision) is legacy
    assert any("open the" in note for note in found.notes) is legacy


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The raw server with the id defect over HTTP on 127.0.0.1: its URL (the LISTENING line, read
    with a bounded wait); killed afterwards."""
    proc = subprocess.Popen([*RAW, "--http", "--defect", "wrong-id"], stdout=subprocess.PIPE, cwd=REPO)
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=60), "no LISTENING line within 60 s"
        line = proc.stdout.readline().decode()
        assert line.startswith("LISTENING "), line
        yield line.split()[1]
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_the_http_reproduction_is_a_curl_that_shows_the_defect(http_server: str, tmp_path: Path) -> None:
    report = report_of(http_server, tmp_path)
    case = case_at(report, "2026-07-28")
    found = reproduction(case, report.targets[0], report.header.harness.version)
    assert found is not None
    (command,) = found.commands
    assert command.startswith(f"curl -sS -i -X POST {http_server} ")
    assert "-H 'Mcp-Method: tools/list'" in command
    out = run_shell(command).decode()
    assert out.startswith("HTTP/1.0 200") or out.startswith("HTTP/1.1 200"), out[:200]
    body = out.split("\r\n\r\n", 1)[1]
    assert json.loads(body)["id"] == 1003


def synthetic(transport: str, revision: str, transcript: list[dict[str, Any]]) -> Case:
    return Case.from_json(
        {
            "key": f"base.x[{transport}@{revision}]",
            "check": "base.x",
            "suite": "base",
            "requirement": "BASE-RPC-002",
            "level": "MUST",
            "title": "t",
            "target": 0,
            "transport": transport,
            "revision": revision,
            "verdict": "FAIL",
            "message": "m",
            "duration": 0.0,
            "evidence": {},
            "transcript": transcript,
        }
    )


def test_bytes_that_are_not_plain_text_are_written_exactly() -> None:
    odd = b'{"jsonrpc":"2.0","id":7,"method":"x\x1b[31m\xff%s\\n\'"}'
    case = synthetic(
        "stdio",
        "2026-07-28",
        [
            {"t": 0, "dir": "send", "channel": "stdin", "text": '{"id":1}'},
            {"t": 0, "dir": "send", "channel": "stdin", "base64": base64.b64encode(odd).decode()},
        ],
    )
    found = reproduction(case, None, "0")
    assert found is not None
    printed, _, command = found.commands[0].rpartition(" | ")
    assert command == "YOUR-SERVER-COMMAND" and any(command in note for note in found.notes)
    assert run_shell(printed) == b'{"id":1}\n' + odd + b"\n"


def test_a_legacy_http_case_opens_a_session_and_leaves_its_id_to_fill_in() -> None:
    headers = {"Content-Type": "application/json", "Mcp-Session-Id": "abc", "Authorization": "[redacted]"}
    case = synthetic(
        "http",
        "2025-06-18",
        [{"t": 0, "dir": "send", "channel": "POST http://127.0.0.1:1/mcp", "headers": headers, "text": "{}"}],
    )
    found = reproduction(case, None, "0")
    assert found is not None and len(found.commands) == 3
    assert '"method":"initialize"' in found.commands[0]
    assert '-H "Mcp-Session-Id: $MCP_SESSION_ID"' in found.commands[2]
    assert "abc" not in found.text()
    assert any("MCP_SESSION_ID" in note for note in found.notes)
    assert any("[redacted]" in note for note in found.notes)


def test_a_case_that_sent_nothing_has_no_reproduction() -> None:
    assert reproduction(synthetic("stdio", "any", []), None, "0") is None


def test_report_md_carries_a_fails_reproduction(stdio_report: Report) -> None:
    from conformance.reporting import views

    text = views.markdown(stdio_report)
    assert text.count("Reproduce:") == 3
    assert "```sh\nprintf '%s\\n' " in text
