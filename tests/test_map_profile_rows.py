"""Issue 12 items 6 and 10 for the MAP review profile, on servers written without the project's code.

A plain MCP server (the base reference server) named with `--suite map-review` claims a profile it does
not show; the reference shows it. The other new rules (MAP-DEC-020, MAP-TOOL-003 as a SHOULD) are proven
by the mutants in tests/test_map_mutants.py.
"""

from __future__ import annotations

from pathlib import Path

from conformance.targets import Target
from tests.map_helpers import checks, run, target
from tests.profile_helpers import PY


def test_a_server_without_the_map_tools_fails_the_profile_row_once() -> None:
    plain = Target(kind="stdio", argv=(PY, "-m", "conformance.reference.base_server"), label="base")
    report = run([plain])
    verdicts = {(c["check"], c["verdict"]) for c in report["cases"]}
    assert ("map-review.profile.shown", "FAIL") in verdicts
    others = [c for c in report["cases"] if c["check"] != "map-review.profile.shown"]
    assert others and all(c["verdict"] == "SKIP" for c in others)
    assert all("blocked by map-review.profile.shown" in c["message"] for c in others)
    assert report["footer"]["exit_code"] == 1


def test_the_reference_shows_the_profile(tmp_path: Path) -> None:
    selected = checks(only=["map-review.profile.shown", "map-review.tools.listed"])
    report = run([target(tmp_path / "s.db")], selected)
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}
