"""DWD-SERVE-001: the server serves its discovery document somewhere the harness can find it.

A server the run names for this profile and that shows no document misses this row: the profile's central
artifact is missing, so the run says so once rather than SKIPping every row unremarked. The row is level
implied (the normative schema constrains the document, not that one is served): WARN, FAIL under
`--strict`."""

from __future__ import annotations

from conformance.pack_api import CaseContext, check, missed, skip, unjudgeable
from conformance_packs.dw_discovery.document import SCHEMA_ID
from conformance_packs.dw_discovery.locate import find_document


@check("dw-discovery.serve.located", "DWD-SERVE-001", "the discovery document is served", once=True)
async def served(ctx: CaseContext) -> None:
    found = await find_document(ctx)
    if found.refused is not None:
        unjudgeable(found.refused)
    if found.source is None:
        # The run names this profile for the target, and the profile's central artifact is not there:
        # the server claims a profile it does not show, which must not pass a gate.
        missed(
            "the target was run for the Durable Workflow discovery profile and shows no discovery "
            "document; looked for " + "; ".join(found.looked_for)
        )
    if found.problem is not None:
        missed(f"the {found.source.describe()} delivered no document: {found.problem}", **found.evidence)
    if found.source.kind == "file":
        skip("the document came from a file the target file names; the server was not seen serving it")
    ctx.note(f"{found.source.describe()}")
    if found.source.by_name:
        ctx.note(f"its body does not carry schema {SCHEMA_ID!r}: the DWD-DOC rows judge it as the document")
