"""The official suite's IDs as data (`conformance/official.json`, a row's `official.checks`): every server
check of the pinned release is mapped to rows or listed as not judged, the coverage command counts what a
report counts, and the official files themselves, when present, name nothing the data does not.

The official files are read from `MCP_CONFORMANCE_OFFICIAL_DIR` (a checkout of
modelcontextprotocol/conformance at the pinned commit, or its npm package, which holds `requirements/`);
without it the comparison with them skips."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from conformance.model import official
from conformance.model.requirements import table
from tests.conftest import REPO, cli

OFFICIAL_DIR = os.environ.get("MCP_CONFORMANCE_OFFICIAL_DIR", "")


def test_every_server_check_is_mapped_or_listed_as_not_judged_never_both() -> None:
    data = official.load()
    mapped = official.rows_by_check(table().values())
    for scenario, checks in data.scenarios.items():
        for check in checks:
            assert (check in mapped) != (check in data.not_judged), f"{scenario}:{check}"
    every = {check for checks in data.scenarios.values() for check in checks}
    # The authorization-server scenarios' checks (apart from the server sets) are every one judged.
    apart = data.authorization_checks
    assert apart and apart <= set(mapped) and not apart & set(data.not_judged)
    assert data.client is not None  # the rows map the client side's checks too (the test below)
    clients = {check for checks in data.client.scenarios.values() for check in checks}
    assert not data.client.authorization_server, "the authorization-server scenarios are the server side's"
    assert set(mapped) <= every | apart | clients and set(data.not_judged) <= every | set(data.runner)
    assert set(data.runner) <= set(data.not_judged), "a runner check without its reason"


def test_the_deterministic_order_check_is_judged_at_the_wire_that_emits_it_only() -> None:
    """alpha.12's WARNING `tools-list-deterministic-order` is emitted at the 2026-07-28 wire only: judged
    there by BASE-TOOLS-007 (a SHOULD, as the official check is a WARNING), absent from 2025-11-25's set."""
    rows = official.rows_by_check(table().values())
    assert rows["tools-list-deterministic-order"] == ["BASE-TOOLS-007"]
    assert table()["BASE-TOOLS-007"].level == "SHOULD"
    at = {rev: {e.check for e in official.check_coverage(rev, rows)} for rev in official.REVISIONS}
    assert "tools-list-deterministic-order" in at["2026-07-28"]
    assert "tools-list-deterministic-order" not in at["2025-11-25"]


def test_the_skills_checks_are_listed_as_a_pending_extension_in_no_frozen_set() -> None:
    """SEP-2640 is pending and not in the specification: its 42 server checks are listed, not judged, and
    counted apart from every revision's frozen set."""
    data = official.load()
    skills = [c for s in data.outside for c in data.scenarios[s]]
    assert len(skills) == 42 and all(c.startswith("sep-2640-") for c in skills)
    assert {data.not_judged[c].reason for c in skills} == {"pending-extension"}
    for revision in official.REVISIONS:
        line = official.counts_line(revision, official.check_coverage(revision, {}))
        assert line.endswith("; in no frozen set: 42 checks in 3 scenarios, 0 judged here"), line


def test_a_row_naming_an_unknown_official_check_is_refused() -> None:
    from conformance.model.requirements import Requirement

    row = Requirement(
        "BASE-X-001",
        "base",
        "MUST",
        "t",
        "quote text",
        "source",
        "test text",
        official={"checks": ["no-such-check"]},
    )
    with pytest.raises(official.OfficialError, match="no-such-check"):
        official.check_rows([row])
    listed = next(iter(official.load().not_judged))
    with pytest.raises(official.OfficialError, match="also listed as not judged"):
        official.check_rows(
            [
                Requirement(
                    "BASE-X-001",
                    "base",
                    "MUST",
                    "t",
                    "quote text",
                    "source",
                    "test text",
                    official={"checks": [listed]},
                )
            ]
        )


def test_coverage_prints_every_check_of_the_set_and_one_counts_line() -> None:
    for revision in official.REVISIONS:
        done = cli("coverage", "--revision", revision)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        checks = [line.split()[0] for line in lines if line.startswith("  ")]
        data = official.load()
        emitted = [c for s, _ in data.revision_scenarios(revision) for c in data.scenarios[s]]
        apart = [c for s in data.authorization_server.values() for c in s if data.emits_at(c, revision)]
        assert checks == [c for c in emitted if data.emits_at(c, revision)] + list(data.runner) + apart
        assert lines[-1].startswith(f"{revision}: ") and " judged here, " in lines[-1]


def test_the_report_counts_the_checks_coverage_counts(tmp_path: Path) -> None:
    """A run over Streamable HTTP at 2026-07-28 of every base and official-fixture check (the latter
    SKIP "not applicable" on a server without the fixture, and count as judged, skipped): its official
    figure counts, as judged here, exactly the checks coverage says rows judge at that revision (the
    same `check_coverage`). Over HTTP, as coverage counts the rows of every transport."""
    from conformance.reporting import model

    out = tmp_path / "run"
    done = cli(
        "run",
        "--server",
        _http_target(tmp_path),
        "--suite",
        "base",
        "--suite",
        "official-fixture",
        "--protocol",
        "2026-07-28",
        "--quiet",
        "--report-dir",
        str(out),
    )
    assert done.returncode in (0, 1), done.stderr
    report = model.load(out / "report.json")
    figures = {entry.revision: entry for entry in official.summary(report.cases)}
    coverage = cli("coverage", "--revision", "2026-07-28").stdout.splitlines()[-1]
    judged = int(re.search(r"scenarios, (\d+) judged here", coverage).group(1))  # type: ignore[union-attr]
    assert figures["2026-07-28"].judged == judged
    line = figures["2026-07-28"].line(official.load().label)
    assert line in done.stdout and "## Official suite" in (out / "report.md").read_text(encoding="utf-8")
    cases = json.loads((out / "report.json").read_text(encoding="utf-8"))["cases"]
    shape = next(c for c in cases if c["check"] == "base.discover.shape")
    assert shape["official"] == ["sep-2575-server-implements-discover"]
    assert 'name="official" value="sep-2575-server-implements-discover"' in (out / "junit.xml").read_text()


def _http_target(tmp_path: Path) -> str:
    """A target file launching the raw test server on Streamable HTTP (2026-07-28)."""
    path = tmp_path / "raw-http.toml"
    command = [sys.executable, "-m", "tests.servers.raw_server", "--http"]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


def _official(path: str) -> Path:
    if not OFFICIAL_DIR or not (Path(OFFICIAL_DIR) / path).exists():
        pytest.skip(f"no official {path} (set MCP_CONFORMANCE_OFFICIAL_DIR to the pinned release)")
    return Path(OFFICIAL_DIR) / path


@pytest.mark.parametrize("revision", official.REVISIONS)
def test_the_pinned_requirement_files_name_no_server_scenario_the_data_lacks(revision: str) -> None:
    yaml = pytest.importorskip("yaml")
    frozen = yaml.safe_load(_official(f"requirements/{revision}.yaml").read_text(encoding="utf-8"))
    data = official.load()
    assert list(data.scored[revision]) == frozen["server"]
    apart = {e["scenario"]: e["reason"] for e in frozen["not_scored"] if e["leg"] == "server"}
    assert dict(data.not_scored[revision]) == apart


#: A check's ID as the scenario sources write it: `id: '...'` before its `name:`, a check table's
#: constant, or the first argument of the runCheck and skipCheck helpers.
SOURCE_ID = re.compile(
    r"\bid: '([a-z][a-zA-Z0-9$-]*)',\s*\n\s*name:|(?:runCheck|skipCheck)\(\s*'([a-z][a-zA-Z0-9$-]*)'"
    r"|_CHECK_ID =\s*'([a-z][a-zA-Z0-9$-]*)'"
)


def test_the_scenario_sources_emit_no_server_check_the_data_lacks() -> None:
    folder = _official("src/scenarios/server")
    data = official.load()
    every = {check for checks in data.scenarios.values() for check in checks}
    text = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.ts")) if ".test." not in p.name
    )
    emitted = {next(g for g in m.groups() if g) for m in SOURCE_ID.finditer(text)}
    assert emitted - every == set()
    quoted = set(re.findall(r"['`]([a-z][a-zA-Z0-9$-]*)['`]", text)) | {"ping"}
    assert every - quoted == set(), "an ID the data holds that the sources never write"


def test_the_package_bundle_emits_every_id_the_data_holds() -> None:
    """The npm package ships its scenarios as one bundle (`dist/index.js`), not `src/`: every scenario
    and check ID the data holds is written there."""
    text = _official("dist/index.js").read_text(encoding="utf-8")
    data = official.load()
    ids = {*data.scenarios, *(c for checks in data.scenarios.values() for c in checks), *data.runner}
    ids |= {*data.authorization_server, *data.authorization_checks}
    assert {i for i in ids if f"`{i}`" not in text and f"'{i}'" not in text} == set()
    assert data.release["version"] in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_docs_quote_what_coverage_prints() -> None:
    """docs/official-suite-coverage.md is the coverage command's output, and README quotes its counts."""
    doc = (REPO / "docs" / "official-suite-coverage.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for revision in official.REVISIONS:
        printed = cli("coverage", "--revision", revision).stdout.splitlines()
        assert "\n".join(printed[1:]) in doc, revision
        assert printed[-1] in readme, revision


def test_every_client_check_is_mapped_or_listed_as_not_judged_never_both() -> None:
    """The client side, as the server side: each client check of the release a row judges or
    `client.not_judged` says why not; a scenario without listed checks says why (`client.unlisted`)."""
    data = official.load().client
    assert data is not None
    mapped = official.rows_by_check(table().values())
    for scenario, checks in data.scenarios.items():
        for check in checks:
            assert (check in mapped) != (check in data.not_judged), f"{scenario}:{check}"
    # Every official client scenario is played now, the OAuth extensions included: none is left unlisted.
    assert not [name for name, why in data.unlisted.items() if why.reason == "not-yet-judged"]


@pytest.mark.parametrize("revision", official.REVISIONS)
def test_the_client_coverage_judges_every_scored_check_but_the_oauth_scenarios(revision: str) -> None:
    rows = official.rows_by_check(table().values())
    covered = official.check_coverage(revision, rows, "client")
    unjudged = [e for e in covered if e.not_scored is None and not e.rows]
    assert unjudged and all(e.check == official.UNLISTED or e.reason == "harness-step" for e in unjudged)
    assert all(e.scenario.startswith("auth/") for e in unjudged if e.check == official.UNLISTED)


@pytest.mark.parametrize("revision", official.REVISIONS)
def test_the_pinned_requirement_files_name_no_client_scenario_the_data_lacks(revision: str) -> None:
    yaml = pytest.importorskip("yaml")
    frozen = yaml.safe_load(_official(f"requirements/{revision}.yaml").read_text(encoding="utf-8"))
    data = official.load().client
    assert data is not None
    assert list(data.scored[revision]) == frozen["client"]
    apart = {e["scenario"]: e["reason"] for e in frozen["not_scored"] if e["leg"] == "client"}
    assert dict(data.not_scored[revision]) == apart


def test_the_release_emits_every_client_check_the_data_lists() -> None:
    """Each client check ID official.json lists is in the release's code (`dist/index.js`)."""
    code = _official("dist/index.js").read_text(encoding="utf-8")
    data = official.load().client
    assert data is not None
    missing = [c for checks in data.scenarios.values() for c in checks if f"`{c}`" not in code]
    assert missing == []
