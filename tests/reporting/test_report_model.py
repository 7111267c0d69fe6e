"""The typed report model reads back every report a run writes, and refuses a broken one in one line.

Why: every view and report command reads the canonical report through `conformance.reporting.model`;
if the model could not read a real report (a failing run, a run with a baseline, a merge), or let a
schema-breaking one through to the views, they would fail or lie far from the cause.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.model.verdicts import Verdict
from conformance.reporting import baseline, canonical, compare, model, views
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with FAILs (the server echoes the wrong id) on rpc rows: exit 1."""
    out = tmp_path_factory.mktemp("model") / "failing"
    args = ("--suite", "base", "-k", "rpc", "--timeout", "5", "--quiet", "--report-dir", str(out))
    done = cli("run", "--server", stdio(RAW, "--defect", "wrong-id"), *args)
    assert done.returncode == 1, done.stdout + done.stderr
    return out


def _data(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path / "report.json").read_text(encoding="utf-8"))
    return data


def test_reads_back_a_failing_run(failing: Path) -> None:
    report = model.load(failing)  # the folder, as the report commands take it
    data = _data(failing)
    assert report == model.load(failing / "report.json") == model.Report.from_json(data)
    assert [c.key for c in report.cases] == [c["key"] for c in data["cases"]]
    assert {c.verdict for c in report.cases} >= {Verdict.FAIL}
    assert report.exit_code == data["footer"]["exit_code"] == 1
    assert report.counts() == data["footer"]["totals"] == canonical.totals(data["cases"])
    assert (
        report.header.run_id == data["header"]["run_id"]
        and report.targets[0].spec == data["targets"][0]["spec"]
    )
    failed = next(c for c in report.cases if c.verdict == Verdict.FAIL)
    assert failed.transcript and failed.evidence, "free-form pieces are kept, read-only"
    with pytest.raises(TypeError):
        failed.evidence["x"] = 1  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        failed.verdict = Verdict.PASS  # type: ignore[misc]
    # A view given the JSON or the model writes the same bytes.
    assert (
        views.markdown(report) == views.markdown(data) == (failing / "report.md").read_text(encoding="utf-8")
    )


def test_reads_back_a_baseline_run_and_a_merge(failing: Path) -> None:
    data = _data(failing)
    listed = baseline.Baseline({"base.rpc.id-echo": "tracked"}, "b.json", "0" * 64)
    applied = baseline.apply(copy.deepcopy(data), listed)
    report = model.Report.from_json(applied)
    xfail = [c for c in report.cases if c.verdict == Verdict.XFAIL]
    assert xfail and all(c.baseline and c.own_verdict == Verdict.FAIL for c in xfail)
    assert report.footer.baseline is not None and report.footer.baseline.entries == 1
    assert Verdict.XFAIL in report.shown_verdicts() and report.exit_code == 0
    other = copy.deepcopy(data)
    for target in other["targets"]:
        target["spec"] += " (second)"
    merged = model.Report.from_json(compare.merge([("a", data), ("b", other)]))
    assert len(merged.cases) == 2 * len(data["cases"]) and merged.header.extra["merged_from"]


@pytest.mark.parametrize(
    ("breaks", "needle"),
    [
        (lambda d: d["cases"][0].update(verdict="MAYBE"), "does not follow the report schema"),
        (lambda d: d["footer"].pop("complete"), "does not follow the report schema"),
        (lambda d: d.update(format_version=2), "report format version 2"),
        (lambda d: d.update(format="something else"), "is not an mcp-conformance report"),
    ],
)
def test_refuses_a_broken_report_in_one_line(failing: Path, tmp_path: Path, breaks: Any, needle: str) -> None:
    data = _data(failing)
    breaks(data)
    (tmp_path / "report.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(model.ReportError) as caught:
        model.load(tmp_path)
    message = str(caught.value)
    assert needle in message and "\n" not in message and str(tmp_path / "report.json") in message
    done = cli("diff", str(failing), str(tmp_path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr


def test_refuses_a_file_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(model.ReportError, match="is not JSON") as caught:
        model.load(tmp_path)
    assert "\n" not in str(caught.value)
