"""`diff` finds a planted regression between two real runs; `merge` joins shards (of a server's run or a
client's) and refuses inputs that cannot be one report."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.reporting import compare
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"
ARGS = ("--suite", "base", "--timeout", "5", "--quiet")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real runs: the reference, the wrong-id mutant, and the reference split into two shards by -k;
    the schema-violation mutant, then again with a baseline listing its failure (FAIL -> XFAIL)."""
    root = tmp_path_factory.mktemp("runs")
    violation = stdio(RAW, "--defect", "schema-violation")
    baseline = root / "baseline.json"
    plan: dict[str, tuple[str, str, tuple[str, ...]]] = {
        "reference": (stdio(RAW), "rpc,tools", ()),
        "mutant": (stdio(RAW, "--defect", "wrong-id"), "rpc,tools", ()),
        "shard-rpc": (stdio(RAW), "rpc", ()),
        "shard-tools": (stdio(RAW), "tools", ()),
        "violation": (violation, "CALL-001", ()),
        "violation-baselined": (violation, "CALL-001", ("--baseline", str(baseline))),
    }
    for name, (server, select, extra) in plan.items():
        if extra:
            update = cli("baseline", "update", "--report", str(root / "violation"), "--out", str(baseline))
            assert update.returncode == 0, update.stderr
        done = cli("run", "--server", server, *ARGS, "-k", select, *extra, "--report-dir", str(root / name))
        assert done.returncode == (1 if name in ("mutant", "violation") else 0), done.stdout + done.stderr
    return {name: root / name for name in plan}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path / "report.json").read_text(encoding="utf-8"))
    return data


def test_diff_finds_the_planted_regression(runs: dict[str, Path]) -> None:
    done = cli("diff", str(runs["reference"]), str(runs["mutant"]), "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert found["regression"] is True
    expected = {f"base.rpc.id-echo[stdio@{rev}]" for rev in ("2026-07-28", "2025-11-25", "2025-06-18")}
    assert {c["key"] for c in found["new_failures"]} == expected
    assert all(c["before"] == "PASS" and c["after"] == "FAIL" for c in found["new_failures"])

    assert found["changed"] == [], "a new failure is listed once, as a new failure, not also as changed"
    assert found["fixed"] == found["added"] == found["removed"] == found["baselined"] == []

    text = cli("diff", str(runs["reference"]), str(runs["mutant"]))
    assert text.returncode == 1 and text.stdout.splitlines()[-1] == "REGRESSION"
    for key in expected:
        assert text.stdout.count(key) == 1, text.stdout
    assert "new failures: 3" in text.stdout and "changed verdicts: 0" in text.stdout


def test_the_reverse_diff_is_a_fix_not_a_regression(runs: dict[str, Path]) -> None:
    done = cli("diff", str(runs["mutant"] / "report.json"), str(runs["reference"] / "report.json"), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert len(found["fixed"]) == 3 and found["new_failures"] == found["changed"] == []


def test_a_failure_put_in_the_baseline_is_now_expected_not_fixed(runs: dict[str, Path]) -> None:
    done = cli("diff", str(runs["violation"]), str(runs["violation-baselined"]), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    keys = {
        f"base.call.structured-matches-schema[stdio@{rev}]"
        for rev in ("2026-07-28", "2025-11-25", "2025-06-18")
    }
    assert {c["key"] for c in found["baselined"]} == keys
    assert all(c["before"] == "FAIL" and c["after"] == "XFAIL" for c in found["baselined"])
    assert found["fixed"] == found["changed"] == found["new_failures"] == [] and found["regression"] is False

    text = cli("diff", str(runs["violation"]), str(runs["violation-baselined"]))
    assert text.returncode == 0 and text.stdout.splitlines()[-1] == "no regression"
    assert "now expected (baselined): 3" in text.stdout and "fixed: 0" in text.stdout
    for key in keys:
        assert text.stdout.count(key) == 1, text.stdout


def test_a_baselined_failure_that_fails_again_without_the_baseline_is_a_regression(
    runs: dict[str, Path],
) -> None:
    done = cli("diff", str(runs["violation-baselined"]), str(runs["violation"]), "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert len(found["new_failures"]) == 3 and found["regression"] is True
    assert all(c["before"] == "XFAIL" and c["after"] == "FAIL" for c in found["new_failures"])
    assert found["changed"] == found["fixed"] == found["baselined"] == []


def test_diff_text_escapes_a_servers_control_characters(runs: dict[str, Path]) -> None:
    before = _load(runs["reference"])
    after = copy.deepcopy(before)
    after["cases"][0]["verdict"] = "FAIL"
    after["cases"][0]["message"] = "\x1b]0;owned\x07\x1b[2J\u202egnp.exe\x9b1m"
    text = compare.diff(before, after).text()
    line = next(line for line in text.splitlines() if after["cases"][0]["key"] in line)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\x9b" not in text
    assert "\\x1b]0;owned\\x07\\x1b[2J\\u202egnp.exe\\x9b1m" in line


def test_diff_reports_added_and_removed_cases(runs: dict[str, Path]) -> None:
    before = _load(runs["reference"])
    after = copy.deepcopy(before)
    gone = after["cases"].pop(0)
    new = {**copy.deepcopy(gone), "key": "base.rpc.brand-new[stdio@2026-07-28]", "verdict": "FAIL"}
    after["cases"].append(new)
    result = compare.diff(before, after)
    assert [c.key for c in result.removed] == [gone["key"]]
    assert [c.key for c in result.new_failures] == [new["key"]], "a new case that fails is a regression too"
    assert result.added == [], "and it is listed once, as a new failure"
    passing = {**copy.deepcopy(gone), "key": "base.rpc.another[stdio@2026-07-28]", "verdict": "PASS"}
    after["cases"].append(passing)
    assert [c.key for c in compare.diff(before, after).added] == [passing["key"]]


def test_diff_notes_a_case_whose_row_id_changed(runs: dict[str, Path]) -> None:
    """A row split or renamed keeps the case's key (its check's): the diff says the row ID changed."""
    before = _load(runs["reference"])
    after = copy.deepcopy(before)
    case = after["cases"][0]
    was, case["requirement"] = case["requirement"], "BASE-RENAMED-001"
    result = compare.diff(before, after)
    assert f"{case['key']}: requirement {was} -> BASE-RENAMED-001" in result.notes
    assert f"note: {case['key']}: requirement {was} -> BASE-RENAMED-001" in result.text()


def test_diff_of_a_missing_report_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("diff", str(tmp_path / "nope"), str(tmp_path / "nope2"))
    assert done.returncode == 2 and "no report" in done.stderr


def test_merge_joins_shards_of_one_target(runs: dict[str, Path], tmp_path: Path) -> None:
    done = cli("merge", str(tmp_path / "merged"), str(runs["shard-rpc"]), str(runs["shard-tools"]))
    assert done.returncode == 0, done.stderr
    merged = _load(tmp_path / "merged")
    assert schemas.errors(schemas.REPORT_ID, None, merged) == []
    reference = _load(runs["reference"])
    assert sorted(c["key"] for c in merged["cases"]) == sorted(c["key"] for c in reference["cases"])
    assert merged["footer"]["totals"] == reference["footer"]["totals"]
    assert len(merged["targets"]) == 1 and merged["footer"]["exit_code"] == 0
    assert [m["select"] for m in merged["header"]["merged_from"]] == ["rpc", "tools"]
    assert merged["header"]["options"]["select"] == "rpc,tools"
    assert {p.name for p in (tmp_path / "merged").iterdir()} >= {"report.md", "junit.xml", "report.html"}


def test_merge_of_disjoint_targets_renumbers_them(runs: dict[str, Path], tmp_path: Path) -> None:
    done = cli("merge", str(tmp_path / "merged"), str(runs["reference"]), str(runs["mutant"]))
    assert done.returncode == 0, done.stderr
    merged = _load(tmp_path / "merged")
    assert [t["index"] for t in merged["targets"]] == [0, 1]
    assert "base.rpc.id-echo[stdio@2025-11-25]#1" in {
        c["key"] for c in merged["cases"] if c["verdict"] == "FAIL"
    }
    assert merged["footer"]["exit_code"] == 1
    assert len(merged["cases"]) == len(_load(runs["reference"])["cases"]) + len(
        _load(runs["mutant"])["cases"]
    )


def _variant(report: dict[str, Any], change: str) -> dict[str, Any]:
    other = copy.deepcopy(report)
    if change == "harness":
        other["header"]["harness"]["version"] = "0.0.9"
    elif change == "suites":
        other["header"]["suites"] = ["base", "dw-discovery"]
    elif change == "protocol":
        other["header"]["options"]["protocol"] = "2025-06-18"
    elif change == "verdict":
        other["cases"][0]["verdict"] = "FAIL"
    elif change == "identity":
        other["targets"][0]["server_info"] = {"name": "another build", "version": "2"}
    return other


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ("harness", "harness version"),
        ("suites", "suites"),
        ("protocol", "option protocol"),
        ("verdict", "the runs disagree"),
        ("identity", "different servers"),
    ],
)
def test_merge_refuses_inconsistent_inputs(
    runs: dict[str, Path], tmp_path: Path, change: str, needle: str
) -> None:
    report = _load(runs["shard-rpc"])
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "report.json").write_text(json.dumps(_variant(report, change)), encoding="utf-8")
    done = cli("merge", str(tmp_path / "out"), str(runs["shard-rpc"]), str(tmp_path / "b"))
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("mcp-conformance: cannot merge:") and needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_merge_refuses_partly_overlapping_targets(runs: dict[str, Path]) -> None:
    one, two = _load(runs["reference"]), _load(runs["mutant"])
    both = copy.deepcopy(one)
    both["targets"].append({**copy.deepcopy(two["targets"][0]), "index": 1})
    with pytest.raises(compare.MergeError, match="share some targets but not all"):
        compare.merge([("a", both), ("b", two)])


def test_merge_joins_client_runs_split_by_scenario_and_keeps_clients_apart(tmp_path: Path) -> None:
    """A client run's targets (one client, a target per transport) are told apart by transport, and its
    case keys keep their `/scenario` through a merge: two scenario shards of the reference client join
    into the unsplit run's cases; a client that never connects, beside it, is two more targets, its keys
    and `blocked_by` renumbered with their scenario."""
    selection = ("--transport", "http", "--transport", "stdio", "--revision", "2025-11-25", "--quiet")
    plan = {
        "whole": ("--scenario", "tools_call", "--scenario", "initialize"),
        "tools": ("--scenario", "tools_call"),
        "init": ("--scenario", "initialize"),
        "mutant": ("--scenario", "tools_call", "--command", "exit 3"),
    }
    for name, extra in plan.items():
        done = cli("client", *extra, *selection, "--report-dir", str(tmp_path / name))
        assert done.returncode == (1 if name == "mutant" else 0), done.stdout + done.stderr
    done = cli("merge", str(tmp_path / "shards"), str(tmp_path / "tools"), str(tmp_path / "init"))
    assert done.returncode == 0, done.stderr
    merged, whole = _load(tmp_path / "shards"), _load(tmp_path / "whole")
    assert schemas.errors(schemas.REPORT_ID, None, merged) == []
    assert sorted(c["key"] for c in merged["cases"]) == sorted(c["key"] for c in whole["cases"])
    assert [t["transport"] for t in merged["targets"]] == ["http", "stdio"]
    done = cli("merge", str(tmp_path / "both"), str(tmp_path / "tools"), str(tmp_path / "mutant"))
    assert done.returncode == 0, done.stderr
    both = _load(tmp_path / "both")
    assert schemas.errors(schemas.REPORT_ID, None, both) == []
    errors = [c for c in both["cases"] if c["verdict"] == "ERROR"]
    assert [c["key"] for c in errors] == [
        "client.contract.run[http@2025-11-25]#2/tools_call",
        "client.contract.run[stdio@2025-11-25]#3/tools_call",
    ]
    assert len(both["cases"]) == len(_load(tmp_path / "tools")["cases"]) + len(
        _load(tmp_path / "mutant")["cases"]
    )
