"""The reference UWMD server passes every uwmd check, over stdio and HTTP, in every revision it speaks.

The full run is the embedded default (`mcp-conformance run --suite uwmd` with no `--server`): the
reference over stdio and over HTTP with its fixture controller, races at full strength (20 rounds of 2
and of 8 racers). It has no WARN and no SKIP to explain. The raw-wire tests below pin what the reference
sends against the catalog's facts and, when `../shared` is present, against the upstream reference
library's outputs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.checks import load_pack
from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.model import vectors
from conformance.model.requirements import table
from conformance.model.targets import reference_targets
from tests.profile_helpers import assert_http_binds_loopback_only, assert_reference_passes, python_module

REPO = Path(__file__).resolve().parents[2].parent
REQUIREMENTS = json.loads(
    (REPO / "conformance_packs" / "uwmd" / "requirements.json").read_text(encoding="utf-8")
)
PARKVIEW = "sha256:98cf81a8927d6449fee516f0412f76df43b20b54bf49d89ffbd0ddd10b5b9fb7"


@pytest.fixture(scope="module")
def default_report() -> dict[str, Any]:
    return api.run_report(None, ["uwmd"], options=RunOptions(timeout=10.0))


@pytest.mark.slow
def test_reference_passes_every_uwmd_check(default_report: dict[str, Any]) -> None:
    assert_reference_passes(default_report)
    assert default_report["footer"]["exit_code"] == 0


@pytest.mark.slow
def test_every_uwmd_row_but_the_info_rows_is_checked_on_both_transports(
    default_report: dict[str, Any],
) -> None:
    rows = {row["id"]: row["level"] for row in REQUIREMENTS["requirements"]}
    # The catalog's 62 rows, UWMD-RESULT-002-EQUAL (the FAIL RESULT-002's test asks for) and
    # UWMD-PROFILE-001 (a claimed binding not shown).
    assert len(rows) == 64 and all(r.startswith("UWMD-") for r in rows)
    info = {r for r, level in rows.items() if level == "info"}
    assert info == {"UWMD-CTX-001", "UWMD-CTX-002"}
    checked = {c.requirement for c in load_pack("uwmd")}
    assert checked == set(rows) - info
    for transport in ("stdio", "http"):
        seen = {c["requirement"] for c in default_report["cases"] if c["transport"] == transport}
        assert seen == checked


def test_levels_are_the_catalogs() -> None:
    """12 MUST, 3 MUST NOT, 7 SHOULD, 1 SHOULD NOT, 37 implied, 2 info (catalog §6), plus two implied rows:
    UWMD-RESULT-002-EQUAL (the catalog's RESULT-002 text-agreement half) and UWMD-PROFILE-001 (at
    UWMD-TOOL-001's level); then two catalog rows a MUST or schema makes unavoidable (the levels audit of
    issue 31): UWMD-CONC-002 MUST (strong If-Match), UWMD-TOOL-015 MUST (schema) (the EditOperation
    schema)."""
    counts: dict[str, int] = {}
    for row in REQUIREMENTS["requirements"]:
        counts[row["level"]] = counts.get(row["level"], 0) + 1
    assert counts == {
        "MUST": 13,
        "MUST NOT": 3,
        "MUST (schema)": 1,
        "SHOULD": 7,
        "SHOULD NOT": 1,
        "implied": 37,
        "info": 2,
    }
    assert all(table()[row["id"]].suite == "uwmd" for row in REQUIREMENTS["requirements"])


@pytest.mark.slow
def test_once_checks_run_once_per_target_and_races_at_full_strength(default_report: dict[str, Any]) -> None:
    once = {c.id for c in load_pack("uwmd") if c.once}
    assert {"uwmd.conc.race-2", "uwmd.conc.race-8", "uwmd.sec.xml-entities"} <= once
    for check_id in once:
        runs = [c for c in default_report["cases"] if c["check"] == check_id]
        assert [c["transport"] for c in runs] == ["stdio", "http"], check_id
    for check_id, racers in (("uwmd.conc.race-2", 2), ("uwmd.conc.race-8", 8)):
        for case in (c for c in default_report["cases"] if c["check"] == check_id):
            assert f"20 rounds of {racers} racers" in case["message"]
            assert "requests overlapped in 20/20 rounds" in case["message"], case["message"]


@pytest.mark.slow
def test_revisions_in_parallel_stay_true(tmp_path: Path) -> None:
    """With `-j`, revisions of one target run at once against one service: every check works on deals of
    its own (ids unique per revision), so nothing one revision does can change another's verdicts."""
    from tests.uwmd_helpers import COSTLY, checks, non_pass, target

    plan = [(target(tmp_path / "s.db"), checks(without=COSTLY))]
    builder = api.new_builder(plan)
    asyncio.run(api.run_plan_async(plan, RunOptions(timeout=10.0, protocol="auto", jobs=3), builder))
    report = api.finish(builder)
    assert report["targets"][0]["revisions_spoken"][:3] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert non_pass(report) == set()


def test_embedded_default_shares_one_state_file_per_target() -> None:
    stdio, http = reference_targets("uwmd")
    stdio_db = stdio.argv[stdio.argv.index("--db") + 1]
    http_db = http.launch[http.launch.index("--db") + 1]
    assert stdio_db != http_db
    assert stdio.settings["controller"]["command"][-2:] == ["--db", stdio_db]
    assert http.settings["controller"]["command"][-2:] == ["--db", http_db]
    # Started as a fork of the reference's fork server (conformance.infra.prefork): `-m FORKSERVER spawn
    # MODULE`.
    assert stdio.settings["controller"]["command"][2:5] == [
        "conformance_reference.forkserver",
        "spawn",
        "conformance_reference.uwmd_controller",
    ]


def test_http_binds_loopback_only() -> None:
    assert_http_binds_loopback_only("conformance_reference.uwmd_server")


# --------------------------------------------------------------------------- the wire, raw


class Wire:
    """A raw 2026-07-28 JSON-RPC client over a reference process's stdio (each read bounded by pytest)."""

    META = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.ids = proc, 0

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": method,
            "params": {**params, "_meta": self.META},
        }
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode() if self.proc.stderr else "no answer"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.send("tools/call", {"name": name, "arguments": arguments})["result"]
        return result


def hook(proc: subprocess.Popen[bytes], name: str, **params: Any) -> dict[str, Any]:
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"v": 1, "id": 1, "hook": name, "params": params}).encode() + b"\n")
    proc.stdin.flush()
    answer: dict[str, Any] = json.loads(proc.stdout.readline())
    assert answer["ok"], answer
    return answer["result"]  # type: ignore[no-any-return]


def test_results_have_the_binding_shape_on_the_wire(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with python_module("conformance_reference.uwmd_server", "--db", db) as proc:
        wire = Wire(proc)
        result = wire.call("uwmd.get_document", {"deal_id": "deal / 1"})
        sc = result["structuredContent"]
        assert sc["resource_uri"] == "https://uwmd.org/deals/deal%20%2F%201"  # the catalog's example
        assert list(sc) == [
            "deal_id",
            "resource_uri",
            "representation_id",
            "fidelity",
            "media_type",
            "semantic_digest",
        ]
        text, link = result["content"]
        assert text == {"type": "text", "text": json.dumps(sc, separators=(",", ":"), ensure_ascii=False)}
        assert link["type"] == "resource_link" and link["uri"] == sc["resource_uri"]
        bundle = wire.send(
            "resources/read", {"uri": "https://uwmd.org/deals/uw_demo_harbor?representation=uw-csv-bundle"}
        )
        (item,) = bundle["result"]["contents"]
        assert item["mimeType"] == "application/vnd.uwmd.csv-bundle+zip"
        assert base64.b64decode(item["blob"]).startswith(b"PK\x03\x04")
        refused = wire.call("uwmd.get_document", {"deal_id": "uw_demo_saguaro", "view": "debt"})
        assert refused["isError"] is True
        assert refused["structuredContent"]["status"] == 406
        assert refused["structuredContent"]["code"] == "BINDING_VIEW_UNAVAILABLE"


def test_if_match_outcomes_match_the_upstream_reference(tmp_path: Path, shared_dir: Path) -> None:
    """Codes and statuses of stale, duplicate, missing, weak and unquoted If-Match, view+xml and `*` agree
    with the upstream reference library's recorded outputs."""
    upstream = json.loads(
        (shared_dir / "upstream" / "uwmd" / "uwmd-reference-outputs.json").read_text("utf-8")
    )
    with python_module("conformance_reference.uwmd_server", "--db", str(tmp_path / "s.db")) as proc:
        wire = Wire(proc)
        deal = "uw_demo_harbor"
        e0 = (
            '"'
            + wire.call("uwmd.get_document", {"deal_id": deal})["structuredContent"]["semantic_digest"]
            + '"'
        )
        op = {"kind": "frontmatter_set", "path": "recommendation", "value": "approve"}
        context = {"actor": "test", "source": "user"}

        def edit(**extra: Any) -> dict[str, Any]:
            return wire.call(
                "uwmd.apply_edit", {"deal_id": deal, "operation": op, "context": context, **extra}
            )

        first = edit(if_match=e0)
        assert first["isError"] is False
        assert set(upstream["apply_edit_first"]["structuredContent"]) <= set(first["structuredContent"])
        current = first["structuredContent"]["semantic_digest"]
        outcomes = {
            "duplicate_same_if_match": edit(if_match=e0),
            "missing_if_match": edit(),
            "weak_tag": edit(if_match=f'W/"{current}"'),
            "unquoted_digest": edit(if_match=current),
        }
        for name, result in outcomes.items():
            expected = upstream[name]
            assert result["isError"] is True
            assert (result["structuredContent"]["code"], result["structuredContent"]["status"]) == (
                expected["code"],
                expected["status"],
            ), name
        assert edit(if_match="*")["isError"] is False  # upstream: `*` succeeds
        conflict = wire.call(
            "uwmd.get_document", {"deal_id": deal, "representation": "uw-xml", "view": "rent_roll"}
        )
        got = conflict["structuredContent"]
        assert (got["code"], got["status"]) == (
            upstream["view_conflict"]["code"],
            upstream["view_conflict"]["status"],
        )


def test_list_representations_matches_the_upstream_reference(tmp_path: Path, shared_dir: Path) -> None:
    upstream = json.loads(
        (shared_dir / "upstream" / "uwmd" / "uwmd-reference-outputs.json").read_text("utf-8")
    )
    expected = upstream["list_representations"]["structuredContent"]
    with python_module("conformance_reference.uwmd_server", "--db", str(tmp_path / "s.db")) as proc:
        got = Wire(proc).call("uwmd.list_representations", {})["structuredContent"]
    assert got["resource_template"] == expected["resource_template"]
    assert got["views"] == expected["views"]
    for mine, theirs in zip(got["representations"], expected["representations"], strict=True):
        for key in (
            "id",
            "media_types",
            "file_extensions",
            "directions",
            "fidelity",
            "representation_version",
        ):
            assert mine[key] == theirs[key], key


def test_parkview_keeps_the_catalogs_digest_through_the_reference(tmp_path: Path, shared_dir: Path) -> None:
    """The upstream Parkview envelope, loaded through the controller into a running reference, reports the
    catalog's golden digest (the reference does not alter a UW representation: UWMD-SCOPE-001)."""
    document = json.loads((shared_dir / "upstream" / "uwmd" / "parkview.uw.json").read_text("utf-8"))
    db = str(tmp_path / "s.db")
    with python_module("conformance_reference.uwmd_controller", "--db", db) as controller:
        loaded = hook(controller, "load_deal", document=document)
    assert loaded["semantic_digest"] == PARKVIEW
    with python_module("conformance_reference.uwmd_server", "--db", db) as proc:
        wire = Wire(proc)
        for selection in (
            {},
            {"representation": "uw-xml"},
            {"representation": "uw-csv-bundle"},
            {"view": "debt"},
        ):
            sc = wire.call("uwmd.get_document", {"deal_id": "uw_2026_a3f9b1", **selection})[
                "structuredContent"
            ]
            assert sc["semantic_digest"] == PARKVIEW, selection
        validated = wire.call("uwmd.validate", {"deal_id": "uw_2026_a3f9b1"})["structuredContent"]
        assert set(json.loads(json.dumps(validated))) >= set(
            json.loads((shared_dir / "upstream" / "uwmd" / "uwmd-reference-outputs.json").read_text("utf-8"))[
                "validate_keys"
            ]
        )


def test_the_catalog_fact_vector_is_the_catalogs_digest() -> None:
    fact = next(v for v in vectors.load("uwmd", "digests.json") if v["kind"] == "digest-fact")
    assert fact["digest"] == PARKVIEW and fact["deal_id"] == "uw_2026_a3f9b1"


def test_arguments_no_codec_can_carry_are_refused_not_crashed(tmp_path: Path) -> None:
    """A value nested deeper than the codecs go, or a number JSON cannot carry as a double (1e400), is a
    400 tool error, not -32603: the protections of every entry point include the tool arguments."""
    meta = json.dumps(Wire.META)
    context = '{"actor": "test", "source": "user"}'
    with python_module("conformance_reference.uwmd_server", "--db", str(tmp_path / "s.db")) as proc:
        assert proc.stdin and proc.stdout
        for index, value in enumerate(("[" * 40 + "]" * 40, "1e400")):
            operation = f'{{"kind": "frontmatter_set", "path": "notes", "value": {value}}}'
            arguments = (
                f'{{"deal_id": "uw_demo_harbor", "if_match": "*", '
                f'"operation": {operation}, "context": {context}}}'
            )
            line = (
                f'{{"jsonrpc": "2.0", "id": {index + 1}, "method": "tools/call", "params": '
                f'{{"name": "uwmd.apply_edit", "arguments": {arguments}, "_meta": {meta}}}}}'
            )
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            result = json.loads(proc.stdout.readline())["result"]
            assert result["isError"] is True, value
            assert result["structuredContent"]["status"] == 400, value
