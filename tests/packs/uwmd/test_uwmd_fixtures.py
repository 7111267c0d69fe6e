"""A missing fixture is a SKIP that names the hook, never a PASS; a partial controller skips only the rows
that need what it lacks; a target file can name its deals instead of offering load_deal.

Also: the reference controller's hook results match the profile schema (`hook.<name>.result`), and it
refuses params it does not know (`unsupported`), as the fixture protocol asks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance_packs.uwmd import common
from tests.uwmd_helpers import COSTLY, cases, checks, run, target

REPO = Path(__file__).resolve().parents[2].parent
#: Rows that need no fixture at all: they judge what any UWMD server lists or answers.
NO_FIXTURE = {
    "uwmd.profile.shown",
    "uwmd.tool.listed",
    "uwmd.ann.read-only",
    "uwmd.ann.apply-edit",
    "uwmd.tool.list-input",
    "uwmd.tool.list-output",
    "uwmd.tool.view-fidelity",
    "uwmd.res.template-listed",
    "uwmd.tool.validate-requires-deal",
    "uwmd.sec.no-file-paths",
}


@pytest.mark.slow
def test_without_a_controller_every_deal_row_skips_naming_its_hook(tmp_path: Path) -> None:
    report = run([target(tmp_path / "s.db", controller=False)], checks(without=COSTLY))
    verdicts = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    for check_id, (verdict, message) in verdicts.items():
        if check_id in NO_FIXTURE:
            assert verdict == "PASS", (check_id, message)
        else:
            assert verdict == "SKIP", (check_id, verdict, message)
            assert message.startswith("needs: "), (check_id, message)
    assert {v for v, _ in verdicts.values()} == {"PASS", "SKIP"}
    assert report["footer"]["exit_code"] == 0


@pytest.mark.slow
def test_a_partial_controller_skips_only_what_it_lacks(tmp_path: Path) -> None:
    selected = checks(
        only=(
            "uwmd.res.views",
            "uwmd.sec.deal-authz",
            "uwmd.sec.representation-authz",
            "uwmd.sec.xml-entities",
            "uwmd.conc.duplicate",
        )
    )
    report = run([target(tmp_path / "s.db", hooks=("load_deal", "reset"))], selected)
    got = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    assert got["uwmd.res.views"][0] == "PASS"
    assert got["uwmd.conc.duplicate"][0] == "PASS"
    assert got["uwmd.sec.deal-authz"] == ("SKIP", "needs: grant, second_principal")
    assert got["uwmd.sec.representation-authz"] == ("SKIP", "needs: grant, second_principal")
    assert got["uwmd.sec.xml-entities"] == (
        "SKIP",
        "needs: load_representation (or a uwmd.convert whose inputSchema takes a source document)",
    )


@pytest.mark.slow
def test_a_target_file_can_name_its_deals(tmp_path: Path) -> None:
    """No controller, the seeded example deals named in `[uwmd]`: the read rows run on them."""
    settings = {
        "uwmd": {
            "deal_id": "uw_demo_harbor",
            "nodebt_deal_id": "uw_demo_saguaro",
            "canary_deal_id": "uw_demo_mesa_canary",
            "defect_deal_id": "uw_demo_copper_defect",
        }
    }
    plain = target(tmp_path / "s.db", controller=False)
    selected = checks(
        only=(
            "uwmd.res.views",
            "uwmd.res.view-unavailable",
            "uwmd.tool.validate-current",
            "uwmd.err.no-confidential",
            "uwmd.tool.tier2-editor",
        )
    )
    report = run([replace(plain, settings=settings)], selected)
    got = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"]}
    assert got["uwmd.res.views"][0] == "PASS"
    assert got["uwmd.res.view-unavailable"][0] == "PASS"
    assert got["uwmd.tool.validate-current"] == (
        "PASS",
        "no load_deal: validation after an edit was not tried",
    )
    assert got["uwmd.err.no-confidential"][0] == "PASS"
    assert "no load_deal: the apply_edit provocations were not sent" in got["uwmd.err.no-confidential"][1]
    assert got["uwmd.tool.tier2-editor"] == ("SKIP", "needs: load_deal (the target has no [controller])")
    assert cases(report, "uwmd.res.views")[0]["revision"] == "2026-07-28"


@pytest.mark.slow
def test_apply_edit_arguments_are_mapped_from_the_schema(tmp_path: Path) -> None:
    """Gap rule G-U1: a server that calls the operation `edit` and takes `actor`/`source` flat is not a
    defect; every row that edits reads the names from its inputSchema and passes."""
    edits = [c for c in checks(without=COSTLY) if c.id.split(".")[1] in ("tool", "conc", "err")]
    report = run([target(tmp_path / "s.db", defect="flat-edit-arguments")], edits)
    assert [(c["check"], c["verdict"], c["message"]) for c in report["cases"] if c["verdict"] != "PASS"] == []
    args = target(tmp_path / "s.db", defect="flat-edit-arguments")
    assert "flat-edit-arguments" in args.argv


def controller_exchange(db: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"v": 1, "id": i + 1, **r}) + "\n" for i, r in enumerate(requests))
    proc = subprocess.run(
        [sys.executable, "-m", "conformance_reference.uwmd_controller", "--db", str(db)],
        cwd=REPO,
        input=lines.encode(),
        capture_output=True,
        timeout=60,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_controller_results_match_the_profile_schema(tmp_path: Path) -> None:
    deal = common.deal_vectors()["harbor"]["document"]
    answers = controller_exchange(
        tmp_path / "s.db",
        [
            {"hook": "hello", "params": {"versions": [1]}},
            {"hook": "load_deal", "params": {"document": deal, "deal_id": "t-1"}},
            {
                "hook": "grant",
                "params": {"principal": "second", "deal_id": "t-1", "representations": ["uw-json"]},
            },
            {"hook": "second_principal", "params": {}},
            {
                "hook": "load_representation",
                "params": {"deal_id": "t-2", "representation": "uw-xml", "body_base64": "PHgvPg=="},
            },
            {"hook": "reset", "params": {}},
            {"hook": "load_deal", "params": {"document": deal, "colour": "red"}},
            {
                "hook": "grant",
                "params": {"principal": "third", "deal_id": "uw_demo_harbor", "representations": []},
            },
            {"hook": "grant", "params": {"principal": "second", "deal_id": "t-1", "representations": []}},
        ],
    )
    hello = answers[0]["result"]
    assert set(hello["hooks"]) == {"reset", "load_deal", "load_representation", "grant", "second_principal"}
    for name, answer in zip(
        ("load_deal", "grant", "second_principal", "load_representation", "reset"), answers[1:6], strict=True
    ):
        assert answer["ok"], answer
        assert schemas.errors(common.SCHEMA_ID, f"hook.{name}.result", answer["result"]) == [], name
    assert answers[1]["result"]["deal_id"] == "t-1"
    assert answers[6]["error"]["code"] == "unsupported"  # an unknown param is never silently ignored
    assert answers[7]["error"]["code"] == "unsupported"  # only two principal roles
    assert answers[8]["error"]["code"] == "not_found"  # reset removed t-1


def test_the_profile_doc_names_every_hook_and_setting() -> None:
    """docs/uwmd-profile.md documents exactly the reference controller's hooks and the suite's settings."""
    import re

    from conformance_reference.uwmd_controller import build_controller
    from conformance_reference.uwmd_state import UwmdStore

    text = (REPO / "docs" / "uwmd-profile.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert documented == set(build_controller(UwmdStore(None)).hooks)
    settings = set(re.findall(r"^([a-z_]+) = ", text.split("[uwmd]", 1)[1].split("```", 1)[0], re.M))
    assert settings == {name for name, _ in common.SETTINGS.values()} | {"parkview_deal_id", "race_rounds"}
