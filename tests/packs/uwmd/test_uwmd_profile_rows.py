"""Issue 12 item 10 for the UW Markdown profile, on services written without the project's code.

Each test runs the suite's checks against a variant of the reference (a conformant one must pass) or a
plain MCP server that does not show the binding at all (the base reference server), so that each new or
changed rule is proven on both sides: a server that breaks it, and one that keeps it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from tests.profile_helpers import assert_profile_row_blocks_the_rest, plain_target
from tests.uwmd_helpers import COSTLY, checks, non_pass, run, target


@pytest.mark.slow
def test_one_second_timestamps_pass_retry_safety(tmp_path: Path) -> None:
    """UWMD-CONC-003 relies on the Tier-2 supersede, not on timestamps: a server stamping edits with the
    whole second passes it (and every other row of its area), even when both edits land in one second."""
    selected = [c for c in checks(without=COSTLY) if c.id.split(".")[1] in ("conc", "tool")]
    report = run([target(tmp_path / "s.db", defect="second-resolution-clock")], selected)
    assert non_pass(report) == set()
    (case,) = [c for c in report["cases"] if c["check"] == "uwmd.conc.retry-safety"]
    assert "not on timestamps" in case["message"]


def test_a_server_without_the_uwmd_tools_misses_the_profile_row_once() -> None:
    """Item 6: `--suite uwmd` against a plain server claims a binding it does not show: one WARN on
    UWMD-PROFILE-001 (level implied: the binding defines its tools without an RFC 2119 keyword), every
    other row SKIP blocked by it, exit 0; --strict makes it the FAIL that exits 1."""
    assert_profile_row_blocks_the_rest(run([plain_target()]), "uwmd.profile.shown", "WARN")
    strict = run([plain_target()], strict=True)
    assert_profile_row_blocks_the_rest(strict, "uwmd.profile.shown", "FAIL")


def test_the_reference_shows_the_binding(tmp_path: Path) -> None:
    report = run([target(tmp_path / "s.db")], checks(only=["uwmd.profile.shown", "uwmd.tool.listed"]))
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}


XML = ["uwmd.sec.xml-entities"]


@pytest.mark.slow
def test_xml_entities_are_probed_through_convert_without_a_controller(tmp_path: Path) -> None:
    """A service written without our code, with no fixture controller: a uwmd.convert that takes the source
    document gets every XML-entity vector as that document. A protected one passes, a naive one fails."""
    safe = run([target(tmp_path / "a.db", defect="convert-takes-source", controller=False)], checks(only=XML))
    (case,) = safe["cases"]
    assert case["verdict"] == "PASS", case["message"]
    assert "3 through convert's source_document (a plain uw-xml accepted there first)" in case["message"]
    assert "no stored uw-xml (needs: load_representation)" in case["message"]
    naive = run(
        [target(tmp_path / "b.db", defect="convert-source-entities-expanded", controller=False)],
        checks(only=XML),
    )
    (case,) = naive["cases"]
    assert case["verdict"] == "FAIL"
    assert "as its source_document succeeded" in case["message"]


@pytest.mark.slow
def test_xml_entities_probe_stored_and_inline_inputs_together(tmp_path: Path) -> None:
    """With the controller too, the stored uw-xml is read as uw-json and as uw-xml (6 probes per vector)
    and the inline document is sent through convert: every probe refused."""
    report = run([target(tmp_path / "s.db", defect="convert-takes-source")], checks(only=XML))
    (case,) = report["cases"]
    assert case["verdict"] == "PASS", case["message"]
    assert "18 probes of stored uw-xml; 3 through convert's source_document" in case["message"]


@pytest.mark.slow
def test_an_inline_input_that_refuses_everything_proves_nothing(tmp_path: Path) -> None:
    """A convert that lists a source document but refuses a plain uw-xml too: its refusals of hostile
    documents are no evidence, so without a controller the row is SKIP (never a vacuous PASS), and with
    one only the stored inputs count."""
    alone = run(
        [target(tmp_path / "a.db", defect="convert-source-refused", controller=False)], checks(only=XML)
    )
    (case,) = alone["cases"]
    assert case["verdict"] == "SKIP"
    assert "refused a plain uw-xml too" in case["message"] and "none was sent" in case["message"]
    both = run([target(tmp_path / "b.db", defect="convert-source-refused")], checks(only=XML))
    (case,) = both["cases"]
    assert case["verdict"] == "PASS"
    assert "18 probes of stored uw-xml" in case["message"] and "none was sent" in case["message"]


NAMED = {
    "deal_id": "uw_demo_harbor",
    "nodebt_deal_id": "uw_demo_saguaro",
    "canary_deal_id": "uw_demo_mesa_canary",
    "defect_deal_id": "uw_demo_copper_defect",
}


def loaded_deals(db: Path) -> list[str]:
    """The deals the harness loaded into the reference's state file (ids the harness makes: conf-*)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return sorted(r[0] for r in conn.execute("SELECT deal_id FROM deals WHERE deal_id LIKE 'conf%'"))


@pytest.mark.slow
def test_named_deals_are_honoured_when_load_deal_is_offered(tmp_path: Path) -> None:
    """`[uwmd] deal_id` and its siblings win over load_deal: the read-only rows read the service's own
    deals (and still pass), while a row that edits loads a deal of its own."""
    read_only = [
        "uwmd.res.views",
        "uwmd.res.view-unavailable",
        "uwmd.res.mime-types",
        "uwmd.tool.view-exclusive",
    ]
    selected = checks(only=[*read_only, "uwmd.conc.duplicate"])
    named = target(tmp_path / "named.db")
    report = run([replace(named, settings={**named.settings, "uwmd": NAMED})], selected)
    assert non_pass(report) == set()
    assert [d.split("-")[1] for d in loaded_deals(tmp_path / "named.db")] == ["harbor"]  # the edit's own
    unnamed = target(tmp_path / "unnamed.db")
    assert non_pass(run([unnamed], selected)) == set()
    assert {d.split("-")[1] for d in loaded_deals(tmp_path / "unnamed.db")} == {"harbor", "saguaro"}


def test_the_old_proof_fails_a_one_second_clock_and_the_supersede_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why UWMD-CONC-003 changed, shown without timing: with both edits in one second of a one-second
    clock, re-applying a frontmatter_set leaves the digest as it was (the catalog's proof would FAIL a
    correct server), while re-applying the section_supersede still changes it."""
    from conformance_packs.uwmd.concurrency import supersede_operation
    from conformance_reference import uwmd_state
    from tests.servers.uwmd_mutants import SecondResolutionClock

    monkeypatch.setattr(uwmd_state, "now_ms", lambda: 1_780_000_000_500)  # one instant: one second
    store = SecondResolutionClock(str(tmp_path / "s.db"))
    context = {"actor": "mcp-conformance", "source": "user"}

    def twice(operation: dict[str, object]) -> tuple[str, str]:
        first = store.apply_edit(uwmd_state.PRIMARY, "uw_demo_harbor", "*", operation, context)
        second = store.apply_edit(uwmd_state.PRIMARY, "uw_demo_harbor", first["etag"], operation, context)
        return first["semantic_digest"], second["semantic_digest"]

    e1, e2 = twice({"kind": "frontmatter_set", "path": "deal_name", "value": "Harbor Point (retried)"})
    assert e1 == e2
    e1, e2 = twice(supersede_operation())
    assert e1 != e2
