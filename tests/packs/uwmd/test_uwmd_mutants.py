"""Each planted defect of the UWMD reference must FAIL (or WARN, for SHOULD and implied rows) exactly the
rows it breaks.

The mutants are `tests/servers/uwmd_mutants.py --defect NAME`: the reference with one rule overridden.
Each runs over stdio on 2026-07-28. The twelve defects the issue names run against every UWMD check but
the costly ones (the races, the second-principal sessions, the one-second wait of CONC-007), which run
only for the defect they are about; the other mutants run the checks of their own rows' modules. The
assertion is the exact set of (check, verdict) pairs that did not pass, so a mutant that also broke an
unrelated row would fail this test.

A text block that differs from structuredContent is a WARN of UWMD-RESULT-002 (a SHOULD row: the catalog
asks for FAIL, which its level cannot give) and a miss of UWMD-RESULT-002-EQUAL (in a row of its own, level
implied: a WARN too, since no MUST asks the block to equal structuredContent), which
`uwmd.result.text-agrees` checks for the five uwmd tools.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.model import requirements
from conformance.model.verdicts import miss_verdict
from tests.profile_helpers import mutant_params
from tests.servers.uwmd_mutants import DEFECTS
from tests.uwmd_helpers import COSTLY, PROFILE, checks, non_pass

F = "FAIL"
W = "WARN"


#: Each check's row level: a miss is FAIL for MUST, MUST NOT and MUST (schema), WARN for implied and SHOULD
#: (`conformance.model.verdicts`).
LEVEL = {c.id: requirements.get(c.requirement).level for c in checks()}


def rows(*pairs: str) -> set[tuple[str, str]]:
    """`check` for a miss of its row (FAIL, or WARN where the row is implied), `check:WARN` (or `:SKIP`)
    for a verdict the check gives whatever the level (weak evidence, a SHOULD aspect, a blocked row)."""
    out = set()
    for pair in pairs:
        check_id, _, verdict = pair.partition(":")
        out.add((f"uwmd.{check_id}", verdict or miss_verdict(LEVEL[f"uwmd.{check_id}"])))
    return out


#: The issue's twelve: (expected non-PASS rows, costly checks the defect is about).
REQUIRED: dict[str, tuple[set[tuple[str, str]], tuple[str, ...]]] = {
    "weak-if-match": (rows("conc.weak-tag"), ()),
    "duplicate-accepted": (rows("conc.duplicate", "conc.retry-safety"), ()),
    "lost-update": (rows("conc.race-2", "conc.race-8"), ("uwmd.conc.race-2", "uwmd.conc.race-8")),
    "no-428": (rows("conc.if-match-required", "tool.apply-edit-requires"), ()),
    "inline-document": (
        rows("tool.edit-link", "result.links-not-inline:WARN", "ctx.no-prose-metadata:WARN"),
        (),
    ),
    "text-differs": (rows("result.text-agrees", "result.text-mirror:WARN"), ()),
    "apply-edit-read-only": (rows("ann.apply-edit"), ()),
    "stack-trace": (rows("err.no-stack-traces"), ()),
    "file-uri": (rows("sec.no-file-paths"), ()),
    "tenant-leak": (
        rows("sec.deal-authz", "sec.link-replay"),
        ("uwmd.sec.deal-authz", "uwmd.sec.link-replay"),
    ),
    "view-when-absent": (rows("res.view-unavailable"), ()),
    "xml-entity-expanded": (rows("sec.xml-entities"), ()),
}
#: Further defects, one or a few rows each: (expected non-PASS rows, modules whose checks run).
MORE: dict[str, set[tuple[str, str]]] = {
    "canary-leak": rows("err.no-confidential"),
    "digest-unchecked": rows("sec.digest-check"),
    "lenient-utf8": rows("sec.utf8"),
    "no-size-limit": rows("sec.size-limits"),
    "zip-unchecked": rows("sec.zip-limits"),
    "representation-acl-ignored": rows("sec.representation-authz"),
    "read-tools-unannotated": rows("ann.read-only:WARN"),
    "replace-agent-in-place": rows("tool.tier2-editor"),
    "selection-conflict-ignored": rows("tool.view-exclusive"),
    "template-without-query": rows("res.template-listed", "tool.list-output"),
    "unknown-representation-as-json": rows("res.model-representations"),
    "validate-cached": rows("tool.validate-current"),
    "view-claims-model": rows("tool.view-fidelity"),
    "view-unknown-served": rows("res.views"),
    "view-as-blob": rows("res.view-text"),
    "xml-generic-mime": rows("res.mime-types", "tool.link-resolves"),
    "bundle-as-text": rows("res.bundle-blob"),
    "view-digest-differs": rows("res.variant-identity"),
    "digest-over-volatile": rows("res.envelope-digest", "conc.digest-stable"),
    "lossy-numbers": rows("res.envelope-digest", "scope.semantics-preserved"),
    "default-xml": rows(
        "res.canonical-uri", "res.default-representation", "tool.default-representation", "tool.link-resolves"
    ),
    "link-without-name": rows("tool.resource-link", "tool.convert-output"),
    "view-with-representation-id": rows("tool.result-keys"),
    "validate-without-readiness": rows("tool.validate-output"),
    "validate-needs-nothing": rows("tool.validate-requires-deal"),
    "convert-needs-source": rows(
        "tool.convert-requires-target", "tool.convert-output", "tool.convert-fidelity"
    ),
    "convert-reports-source": rows("tool.convert-output"),
    "convert-digest-of-bytes": rows("tool.convert-fidelity"),
    "convert-any-target": rows("tool.convert-unknown-target"),
    "validate-writes": rows("tool.reads-stable"),
    # No structuredContent: SHOULD rows WARN, the row that needs the descriptors FAILs.
    "list-text-only": rows("tool.list-output", "result.structured:WARN", "ctx.structured-receipts:WARN"),
    "bundle-embedded": rows("ctx.bundle-link:WARN"),
    "summary-missing": rows("ctx.structured-receipts:WARN"),
    "error-text-bloated": rows("err.is-error"),
    "precondition-details-missing": rows("err.structured:WARN"),
    # The same operation again with the new ETag is answered "already applied": not idempotent is broken.
    "idempotent-edit": rows("conc.retry-safety"),
    "stale-as-409": rows("conc.stale-if-match", "conc.duplicate", "conc.retry-safety", "conc.weak-tag"),
    # list_representations is callable but not listed: its schema cannot be judged (SKIP, not a false PASS).
    "list-unlisted": rows("tool.listed", "tool.list-input:SKIP"),
    "list-input-strict": rows("tool.list-input"),
    # No uwmd tool listed: UWMD-PROFILE-001 FAILs; the other rows SKIP
    # (tests/packs/uwmd/test_uwmd_profile_rows.py).
    "lists-no-uwmd-tools": rows("profile.shown"),
    "receipt-etag-unquoted": rows("tool.edit-receipt"),
    "edit-touches-status": rows("tool.edit-roundtrip"),
    "id-not-encoded": rows("res.canonical-uri"),
    "xml-without-namespace": rows("res.text-contents"),
    "extra-op-members": rows("tool.edit-operation-schema"),
    # A probe that hangs or kills the server is the defect itself: FAIL with the evidence, not ERROR; the
    # next row gets a restarted session and passes.
    "hangs-on-dtd": rows("sec.xml-entities"),
    # A stored uw-xml read as uw-xml is served verbatim, DTD and all: only the uw-xml read sees it.
    "xml-served-verbatim": rows("sec.xml-entities"),
    # convert takes a source document (a conformant variant) but parses it naively: the inline probe.
    "convert-source-entities-expanded": rows("sec.xml-entities"),
    "crashes-on-file-uri": rows("sec.no-file-paths"),
}
EXPECTED = {**{k: v for k, (v, _) in REQUIRED.items()}, **MORE}
#: The hang and the crash say so in the FAIL's message.
HANGS = {
    "hangs-on-dtd": ("uwmd.sec.xml-entities", "the server did not answer in time"),
    "crashes-on-file-uri": ("uwmd.sec.no-file-paths", "the server broke the connection"),
}


def selection(defect: str) -> list[Any]:
    """The checks a mutant runs (see the module docstring)."""
    if defect in REQUIRED:
        costly = REQUIRED[defect][1]
        return checks(without=[c for c in COSTLY if c not in costly])
    areas = {check_id.split(".")[1] for check_id, _ in MORE[defect]}
    wanted = {check_id for check_id, _ in MORE[defect]}
    return [c for c in checks() if c.id.split(".")[1] in areas and (c.id not in COSTLY or c.id in wanted)]


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)
    assert len(REQUIRED) == 12 and len(EXPECTED) >= 12


def test_every_check_has_a_mutant_that_it_catches() -> None:
    """The project's rule: a check that no defect makes fail could be a check that cannot fail."""
    caught = {
        check_id for expected in EXPECTED.values() for check_id, verdict in expected if verdict != "SKIP"
    }
    assert {c.id for c in checks()} - caught == set()


@pytest.fixture(scope="module")
def reports(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the mutants of one group (`mutant_params`) this session selected, two at a time."""
    return PROFILE.mutant_reports(request, tmp_path_factory, __file__, EXPECTED, selection)


@pytest.mark.slow
@mutant_params(EXPECTED)
def test_mutant_fails_exactly_its_rows(defect: str, reports: dict[str, Any]) -> None:
    report = reports[defect]
    assert non_pass(report) == EXPECTED[defect]
    failed = [c for c in report["cases"] if c["verdict"] in ("FAIL", "WARN")]
    assert all(c["message"] and (c["evidence"] or c["transcript"]) for c in failed), (
        "a verdict carries evidence"
    )
    assert report["footer"]["exit_code"] == (1 if any(c["verdict"] == "FAIL" for c in failed) else 0)
