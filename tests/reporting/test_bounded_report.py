"""The report survives hostile servers: it is bounded whatever a server sends, it is written before any
view, a view that fails or overruns its time budget is one line, and SIGTERM or SIGINT leave a partial
report within 5 s.

The servers are `tests/servers/flood_server.py`: the conformant raw server with a notification flood
(over Streamable HTTP: an SSE stream that never carries the answer) or a hang on chosen methods.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.reporting import canonical, model, views
from tests import hostile
from tests.conftest import PY, REPO, budget
from tests.hostile import PEAK_LIMIT_MB, harness, left_after

REVISION = "2025-11-25"
FLOOD = [PY, "-m", "tests.servers.flood_server"]
VIEW_FILES = ("report.md", "junit.xml", "report.html", "report.sarif")
#: What README.md promises: a partial report within this many seconds of SIGINT or SIGTERM.
SIGNAL_BOUND = 5.0


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def _target(tmp_path: Path, name: str, args: list[str], *, http: bool) -> str:
    """A target file for a flood server tagged with the test's folder (its processes are counted)."""
    command = [*FLOOD, *(["--http"] if http else []), *args, "--tag", hostile.process_tag(tmp_path)]
    path = tmp_path / f"{name}.toml"
    transport = '\ntransport = "http"' if http else ""
    path.write_text(
        f"[target]\ncommand = {json.dumps(command)}{transport}\nlabel = {json.dumps(name)}\n",
        encoding="utf-8",
    )
    return str(path)


def _none_left(tag: str, within: float = 10.0) -> list[int]:
    """The tagged server processes still alive after `within` seconds (bounded polling; none expected)."""
    return left_after(tag, within)


def _omitted(report: model.Report) -> list[Any]:
    return [e["omitted"] for c in report.cases for e in c.transcript if "omitted" in e]


@pytest.mark.parametrize("http", [True, False], ids=["http-sse", "stdio"])
def test_a_notification_flood_leaves_a_bounded_report_and_every_view(http: bool, tmp_path: Path) -> None:
    target = _target(tmp_path, "flood", [], http=http)
    out = tmp_path / "r"
    started = time.monotonic()
    try:
        result, peak_mb = harness(
            "run", "--server", target, "--protocol", REVISION, "--timeout", "2", "--quiet",
            "--report-dir", str(out),
        )  # fmt: skip
    finally:
        left = _none_left(hostile.process_tag(tmp_path))
    elapsed = time.monotonic() - started
    assert not left, f"server processes left behind: {left}"
    assert result.returncode == 1, result.stderr[-2000:]
    size = (out / "report.json").stat().st_size
    print(
        f"flood over {'HTTP' if http else 'stdio'}: report.json {size} bytes, run {elapsed:.1f} s, "
        f"peak RSS {peak_mb:.0f} MB"
    )
    assert peak_mb < PEAK_LIMIT_MB, f"the harness peaked at {peak_mb:.0f} MB"
    assert size < canonical.REPORT_BOUND
    report = model.load(out)  # validated against the schema, read back by the typed model
    assert report.footer.complete is True and report.footer.exit_code == 1
    # A request sent and left unanswered shows its wire; one not sent (its method already hung twice in
    # the revision, the target-cost rule) has none to show and says so.
    timed_out = [c for c in report.cases if c.verdict == "ERROR" and c.message.startswith("timeout: ")]
    assert timed_out and all(c.transcript for c in timed_out), "each flooded request's case shows its wire"
    omitted = _omitted(report)
    assert omitted, "the flood's frames beyond the budget are counted by a marker entry"
    assert sum(o["entries"] for o in omitted) > 1000
    for case in timed_out:  # the first and the last entries of a cut transcript are kept around the marker
        marks = [i for i, e in enumerate(case.transcript) if "report budget" in e.get("note", "")]
        if marks:
            assert 0 < marks[0] < len(case.transcript) - 1
    assert "view" not in result.stderr, result.stderr[-2000:]
    for name in VIEW_FILES:
        assert (out / name).stat().st_size > 0


@pytest.mark.slow
@pytest.mark.parametrize("http", [True, False], ids=["http-sse", "stdio"])
def test_a_flood_past_the_transcript_budget_keeps_each_cases_first_and_last_frames(
    http: bool, tmp_path: Path
) -> None:
    """60 KB notifications spend the target's transcript budget (48 MB) within the first flooded
    case: each later one keeps its first and last frames around a marker counting the rest, and
    the harness stays under its memory bound. Each flooded request waits out a 10 s timeout, so even
    a loaded machine reads well past 48 MB of the flood (about 3 flooded cases run, the target-cost
    rule judging the rest)."""
    target = _target(tmp_path, "flood", ["--pad", "60000"], http=http)
    out = tmp_path / "r"
    try:
        result, peak_mb = harness(
            "run", "--server", target, "--protocol", REVISION, "--timeout", "10", "--quiet",
            "--report-dir", str(out),
        )  # fmt: skip
    finally:
        left = _none_left(hostile.process_tag(tmp_path))
    assert not left, f"server processes left behind: {left}"
    assert result.returncode == 1, result.stderr[-2000:]
    size = (out / "report.json").stat().st_size
    report = model.load(out)
    spent = [
        c for c in report.cases if any("transcript budget spent" in e.get("note", "") for e in c.transcript)
    ]
    dropped = sum(
        e["omitted"]["entries"]
        for c in spent
        for e in c.transcript
        if "transcript budget spent" in e.get("note", "")
    )
    print(
        f"60 KB flood over {'HTTP' if http else 'stdio'}: {len(spent)} case(s) past the transcript "
        f"budget, {dropped} frames counted, report.json {size} bytes, peak RSS {peak_mb:.0f} MB"
    )
    assert peak_mb < PEAK_LIMIT_MB, f"the harness peaked at {peak_mb:.0f} MB"
    assert size < canonical.REPORT_BOUND
    assert spent and dropped > 0, "the flood spent the transcript budget"
    for case in spent:
        entries = case.transcript
        at = next(i for i, e in enumerate(entries) if "transcript budget spent" in e.get("note", ""))
        assert 0 < at < len(entries) - 1, "a frame is kept before and after the count"
        assert entries[at + 1]["dir"] in ("send", "recv"), "the latest frame is kept after the count"


def test_the_budget_cuts_a_huge_case_to_its_first_and_last_entries() -> None:
    """Unit: 100,000 entries and a 5 MB evidence value keep within the per-case budget, and a run of
    many such cases within the run budget plus each case's floor."""
    entries = [
        {"t": i / 1000, "dir": "recv", "text": '{"jsonrpc":"2.0","method":"x"}' * 4} for i in range(100_000)
    ]
    budget = canonical.Budget()
    cases = []
    for n in range(30):  # the run budget is spent after a dozen such cases: the rest keep the floor
        case = {
            "key": f"k{n}",
            "message": "m" * 100_000,
            "evidence": {"why": "\x01" * 5_000_000, "frames": list(range(100_000))},
            "transcript": entries,
        }
        cases.append(budget.bound(case))
    first = cases[0]
    assert first["transcript"][0] == entries[0] and first["transcript"][-1] == entries[-1]
    marker = next(e for e in first["transcript"] if "omitted" in e)
    kept = len(first["transcript"]) - 1
    assert marker["omitted"]["entries"] == len(entries) - kept and marker["dir"] == "event"
    assert len(json.dumps(first["message"])) <= canonical.MESSAGE_BYTES
    assert isinstance(first["evidence"]["why"], str) and "left out" in first["evidence"]["why"]
    last = cases[-1]
    assert last["transcript"][0] == entries[0] and last["transcript"][-1] == entries[-1]


def test_a_spent_transcript_keeps_each_cases_first_and_last_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit: once the target's transcript budget is spent, each case (each mark) still keeps its first
    and last frames, around one marker counting the frames in between; memory grows per case, not per
    frame; and the report's own budget carries the count on."""
    from conformance.adapters import transcript as wire

    monkeypatch.setattr(wire, "TRANSCRIPT_BUDGET", 10_000)
    transcript = wire.Transcript()
    transcript.record("send", b"x" * 20_000)  # spends the budget
    cases = []
    for n in range(3):
        mark = transcript.mark()
        for i in range(5_000):
            transcript.record("recv", f'{{"case":{n},"frame":{i}}}'.encode() + b" " * 5_000)
        cases.append(transcript.since(mark))
    assert len(transcript.entries) == 1 + 3 * 3, "first, marker and last per case, whatever the flood"
    for n, entries in enumerate(cases):
        first, marker, last = entries
        assert first["text"].startswith(f'{{"case":{n},"frame":0}}')
        assert last["text"].startswith(f'{{"case":{n},"frame":4999}}')
        assert last["truncated_from"] == 5_000 + len(f'{{"case":{n},"frame":4999}}')
        assert len(first["text"]) == wire.SPENT_BYTES_PER_ENTRY, "past the budget an entry keeps less"
        assert marker["dir"] == "event" and marker["omitted"]["entries"] == 4_998
        assert marker["omitted"]["bytes"] > 4_998 * 5_000
        assert "first and latest entries are kept" in marker["note"]
    assert transcript.dropped == 3 * 4_998
    # One frame in a case is kept alone; two are kept both, with nothing counted.
    for frames in (1, 2):
        mark = transcript.mark()
        for i in range(frames):
            transcript.record("recv", b"%d" % i)
        assert [e["text"] for e in transcript.since(mark)] == [str(i) for i in range(frames)]
    # The harness's own requests are kept whatever the flood around them (each is one the harness chose
    # to send), so a check reading the whole log still matches every response to its request.
    mark = transcript.mark()
    for i in range(50):
        transcript.record("send", b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i)
        for _ in range(100):
            transcript.record("recv", b'{"jsonrpc":"2.0","method":"notifications/message"}')
    sent = [e for e in transcript.since(mark) if e["dir"] == "send"]
    assert [e["text"] for e in sent] == [f'{{"jsonrpc":"2.0","id":{i},"method":"ping"}}' for i in range(50)]
    assert len(transcript.since(mark)) < 50 * 4, "the flood between them is still counted, not kept"
    # The report's budget cuts the case again and counts the marker's entries with its own.
    result = canonical.bound_transcript(cases[0], canonical.CaseBudget(transcript_entries=2))
    assert sum(e["omitted"]["entries"] for e in result if "omitted" in e) == 4_998


def test_a_thousand_flooded_cases_stay_under_the_documented_bound(tmp_path: Path) -> None:
    """The README's figure, measured on the file as written: 1,000 cases, each with a flood's transcript,
    a huge evidence value and a huge message, in a report under `REPORT_BOUND`."""
    from conformance.engine.events import CaseFinished
    from conformance.engine.results import CaseResult
    from conformance.model.verdicts import Verdict

    entries = [{"t": i / 1000, "dir": "recv", "text": "\x1b" * 2000} for i in range(2_000)]
    builder = canonical.ReportBuilder("run-1", {"suites": ["base"]})
    for n in range(1000):
        result = CaseResult(
            key=f"base.rpc.id-echo[stdio@2025-11-25]#{n}",
            check="base.rpc.id-echo",
            suite="base",
            requirement="BASE-RPC-002",
            level="MUST",
            title="id echo",
            target=0,
            transport="stdio",
            revision=REVISION,
            verdict=Verdict.ERROR,
            message="\x00" * 50_000,
            duration=1.0,
            evidence={"why": "\x01" * 100_000, "frames": [{"a": "\x02" * 1000}] * 1000},
            transcript=entries,
        )
        builder.handle(CaseFinished(result))
    builder.finish(True)
    canonical.write_json_atomic(tmp_path / "report.json", builder.report)
    size = (tmp_path / "report.json").stat().st_size
    print(f"1,000 flooded cases: report.json {size} bytes")
    assert size < canonical.REPORT_BOUND
    report = model.load(tmp_path)
    assert all(any("omitted" in e for e in c.transcript) for c in report.cases)


# --------------------------------------------------------------------------- signals


class Announcements:
    """A loopback listener the flood server tells (`--announce PORT`) when it starts to hang."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    self.lines.put(conn.makefile().readline().strip())

    def wait(self, count: int, within: float = 60.0) -> list[str]:
        deadline = time.monotonic() + within
        got: list[str] = []
        while len(got) < count:
            got.append(self.lines.get(timeout=max(0.01, deadline - time.monotonic())))
        return got

    def close(self) -> None:
        self.sock.close()


def _report_within(
    path: Path, deadline: float, lines: queue.Queue[str | None], seen: list[str]
) -> dict[str, Any]:
    """The report at `path` once it exists (written atomically: whole or absent), looked for at each
    line the harness writes to stderr (it says when the partial report is written), or every 50 ms,
    until `deadline` (a monotonic time); fails once the bound passes with no report. The lines read
    are added to `seen`."""
    while True:
        with contextlib.suppress(FileNotFoundError):
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
        left = deadline - time.monotonic()
        assert left > 0, f"no {path.name} within {SIGNAL_BOUND:g} s of the signal: {''.join(seen)[-2000:]}"
        with contextlib.suppress(queue.Empty):
            line = lines.get(timeout=min(0.05, left))
            assert line is not None, f"the harness ended with no {path.name}: {''.join(seen)[-2000:]}"
            seen.append(line)


def _rest(lines: queue.Queue[str | None], within: float) -> str:
    """What is left of a stream read by `hostile.line_queue`, up to its end (bounded)."""
    deadline, seen = time.monotonic() + within, []
    while (line := lines.get(timeout=max(0.01, deadline - time.monotonic()))) is not None:
        seen.append(line)
    return "".join(seen)


def _peak_mb(stderr: str) -> float:
    """The harness's peak RSS as the wrapper of `hostile.harness` prints it (VmHWM from /proc)."""
    peaks = [line.split()[1] for line in stderr.splitlines() if line.startswith("PEAK-KB ")]
    assert peaks, f"the harness printed no peak: {stderr[-2000:]}"
    return int(peaks[-1]) / 1024


@pytest.mark.parametrize(
    ("sig", "code", "reason", "targets", "http"),
    [
        (signal.SIGTERM, 143, "terminated", 1, False),
        (signal.SIGINT, 130, "interrupted", 1, False),
        (signal.SIGTERM, 143, "terminated", 2, False),
        (signal.SIGTERM, 143, "terminated", 1, True),
    ],
    ids=["sigterm", "sigint", "sigterm-j2", "sigterm-http"],
)
def test_a_signal_mid_case_leaves_a_partial_report_within_5_s(
    sig: signal.Signals, code: int, reason: str, targets: int, http: bool, tmp_path: Path
) -> None:
    """Every tools/call hangs (as in the issue): the signal comes while a case waits on one, and a
    report marked incomplete exists within 5 s; the harness stays under its memory bound; no server
    process outlives the run; the exit code says which signal. With two targets and `-j 2` the
    workers stop too and the parent merges. Over Streamable HTTP the hung POST is the wait."""
    listen = Announcements()
    args = ["--flood", "", "--hang", "tools/call", "--announce", str(listen.port)]
    servers = [_target(tmp_path, f"hang{n}", args, http=http) for n in range(targets)]
    out = tmp_path / "r"
    command = [PY, "-c", hostile.WRAPPER, "run", "--protocol", REVISION, "--timeout", "60"]
    for server in servers:
        command += ["--server", server]
    command += ["-j", str(targets), "--report-dir", str(out)]
    proc = subprocess.Popen(
        command, cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        err = hostile.line_queue(proc.stderr)
        listen.wait(targets)  # a case of each target waits on a tools/call that never comes
        assert not (out / "report.json").exists(), "no report before the signal"
        proc.send_signal(sig)
        signalled = time.monotonic()
        seen: list[str] = []
        partial = _report_within(out / "report.json", signalled + SIGNAL_BOUND, err, seen)
        first = time.monotonic() - signalled
        assert partial["footer"]["complete"] is False and partial["footer"]["reason"] == reason
        proc.wait(timeout=60)
        ended = time.monotonic() - signalled
        stdout = proc.stdout.read()
        stderr = "".join(seen) + _rest(err, within=10.0)
    finally:
        listen.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    peak_mb = _peak_mb(stderr)
    print(
        f"{sig.name} with {targets} target(s): partial report after {first:.2f} s, exit after {ended:.2f} s, "
        f"peak RSS {peak_mb:.0f} MB"
    )
    assert "partial report written" in stderr, stderr[-2000:]
    assert peak_mb < PEAK_LIMIT_MB, f"the harness peaked at {peak_mb:.0f} MB"
    assert proc.returncode == code, stderr[-2000:]
    report = model.load(out)
    assert report.footer.complete is False and report.footer.reason == reason
    assert report.footer.exit_code == code
    assert [t.index for t in report.targets] == list(range(targets))
    assert any(c.verdict == "PASS" for c in report.cases), "the cases judged before the signal are kept"
    assert f"; exit {code})" in stdout and stdout.rstrip().splitlines()[-1].startswith("INTERRUPTED")
    if targets > 1:  # the merged report (the workers' cases) follows within the bound, stretched by load
        assert ended < budget(SIGNAL_BOUND), f"the merged report came {ended:.1f} s after the signal"
    assert _none_left(hostile.process_tag(tmp_path)) == []
    assert not [p for p in _children_named("conformance.engine.workers")], "a worker outlived the run"


def _children_named(module: str) -> list[int]:
    """Worker processes of any run still alive (none may outlive the run that started it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if module.encode() in argv and ppid == os.getpid():
            found.append(int(entry.name))
    return found


# --------------------------------------------------------------------------- views


def test_a_view_that_raises_or_overruns_is_one_line_and_the_report_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.front.cli import main

    stop = threading.Event()

    def boom(report: Any) -> str:
        raise RuntimeError("this view is broken")

    def slow(report: Any) -> str:
        stop.wait(30)  # far past its budget; released when the test ends
        return "late"

    monkeypatch.setattr(views, "VIEW_BUDGET", 1.0)
    monkeypatch.setattr(
        views, "VIEWS", {**views.VIEWS, "boom": ("boom.txt", boom), "slow": ("slow.txt", slow)}
    )
    raw = f"stdio:{PY} -m tests.servers.raw_server"
    started = time.monotonic()
    try:
        args = ["--server", raw, "--protocol", REVISION, "-k", "id-echo", "--quiet"]
        code = main(["run", *args, "--report-dir", str(tmp_path)])
    finally:
        stop.set()
    assert time.monotonic() - started < 60
    err = capsys.readouterr().err
    assert code == 0, err
    lines = [line for line in err.splitlines() if "view" in line]
    assert len(lines) == 2, err
    assert any("the boom view failed: RuntimeError('this view is broken')" in line for line in lines)
    assert any("the slow view took longer than its 1 s budget" in line for line in lines)
    report = model.load(tmp_path)
    assert report.footer.complete and report.cases
    for name in VIEW_FILES:
        assert (tmp_path / name).exists()
    assert not (tmp_path / "boom.txt").exists() and not (tmp_path / "slow.txt").exists()
    assert not list(tmp_path.glob(".tmp-*")) or stop.is_set()


def test_write_views_bounds_each_view_in_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit: a stuck view costs its budget, not the run; the others are written."""
    stop = threading.Event()
    monkeypatch.setattr(
        views, "VIEWS", {**views.VIEWS, "stuck": ("stuck.txt", lambda r: stop.wait(30) and "")}
    )
    builder = canonical.ReportBuilder("run-1", {"suites": ["base"]})
    builder.finish(True)

    started = time.monotonic()
    try:
        failures = views.write_views(builder.report, tmp_path, budget=0.5)
    finally:
        stop.set()
    assert time.monotonic() - started < 15
    assert failures == ["the stuck view took longer than its 0.5 s budget and was not written"]
    for name in VIEW_FILES:
        assert (tmp_path / name).exists()
