"""DWD-SERVE-001: the server serves its discovery document somewhere the harness can find it."""

from __future__ import annotations

from conformance.engine.checks import check, missed, skip, unjudgeable
from conformance.engine.context import CaseContext
from suites.dw_discovery.locate import find_document


@check("dw-discovery.serve.located", "DWD-SERVE-001", "the discovery document is served", once=True)
async def served(ctx: CaseContext) -> None:
    found = await find_document(ctx)
    if found.refused is not None:
        unjudgeable(found.refused)
    if found.source is None:
        skip("needs: discovery location; looked for " + "; ".join(found.looked_for))
    if found.problem is not None:
        missed(f"the {found.source.describe()} delivered no document: {found.problem}", **found.evidence)
    if found.source.kind == "file":
        skip("the document came from a file the target file names; the server was not seen serving it")
    ctx.note(f"{found.source.describe()}")
