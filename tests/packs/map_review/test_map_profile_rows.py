"""Issue 12 items 6 and 10 for the MAP review profile, on servers written without the project's code.

A plain MCP server (the base reference server) named with `--suite map-review` claims a profile it does
not show; the reference shows it. The other new rules (MAP-DEC-020, MAP-TOOL-003 as a SHOULD) are proven
by the mutants in tests/packs/map_review/test_map_mutants.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.map_helpers import PROFILE, checks, run, target
from tests.profile_helpers import assert_profile_row_blocks_the_rest, plain_target

MUTANTS = list(PROFILE.mutants_argv)


def test_a_server_without_the_map_tools_fails_the_profile_row_once() -> None:
    assert_profile_row_blocks_the_rest(run([plain_target()]), "map-review.profile.shown")


def test_the_reference_shows_the_profile(tmp_path: Path) -> None:
    selected = checks(only=["map-review.profile.shown", "map-review.tools.listed"])
    report = run([target(tmp_path / "s.db")], selected)
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}


def test_an_unsupported_arrangement_skips_naming_the_values(tmp_path: Path) -> None:
    """A controller that cannot honour a param answers `unsupported`: the SKIP says which value it was
    asked for (allowed_actions=["decline"]), not only the key."""
    db = tmp_path / "s.db"
    base = target(db)
    refusing = [*MUTANTS, "--controller", "--refuse", "create_review:allowed_actions", "--db", str(db)]
    arranged = replace(base, settings={**base.settings, "controller": {"command": refusing}})
    report = run([arranged], checks(only=["map-review.decide.allowed-actions", "map-review.decide.approve"]))
    got = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    assert got["map-review.decide.approve"][0] == "PASS"
    assert got["map-review.decide.allowed-actions"] == (
        "SKIP",
        'needs: create_review with allowed_actions=["decline"] (this service cannot honour allowed_actions)',
    )


def test_fresh_reviews_may_expire_a_term_after_creation(tmp_path: Path) -> None:
    """What expires_at a fresh review carries is the service's: one whose reviews expire a term after
    creation (none sharing an expires_at) passes the clock rows, which pass `expires_at` to create_review
    wherever they need reviews to share one."""
    clock_rows = [
        "map-review.race.expiry-boundary",
        "map-review.decide.expired",
        "map-review.read.open-review",
    ]
    report = run([target(tmp_path / "s.db", defect="term-expiry")], checks(only=clock_rows))
    assert {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"} == set()
