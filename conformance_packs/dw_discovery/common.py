"""What every check of the suite starts from: the located document, its violations, its tools."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, blocked, missed, skip
from conformance_packs.dw_discovery.document import Violation, describe, tools_of, validate, violations_of
from conformance_packs.dw_discovery.locate import Found, find_document

#: The cases that judge what the other rows stand on: whether a document was served, and its root.
SERVE = "dw-discovery.serve.located"
OBJECT = "dw-discovery.doc.object"
REQUIRED = "dw-discovery.doc.required"


def _not_located(found: Found) -> str:
    if found.refused is not None:
        return (
            f"the [dw-discovery] configuration was refused (see dw-discovery.serve.located): {found.refused}"
        )
    if found.source is None:
        return "needs: discovery location; looked for " + "; ".join(found.looked_for)
    if found.problem is not None:
        return f"the {found.source.describe()} delivered no document (DWD-SERVE-001): {found.problem}"
    return "the document is not JSON (DWD-DOC-001 reports it)"


async def located(ctx: CaseContext) -> Found:
    """The document's source and parsed body; SKIP when there is none to judge."""
    found = await find_document(ctx)
    if found.refused or found.source is None or found.problem is not None:
        blocked(SERVE, _not_located(found))
    if found.parse_error is not None:  # served, but not JSON: DWD-DOC-001's case FAILs it, not SERVE's
        blocked(OBJECT, _not_located(found))
    return found


async def judged(ctx: CaseContext) -> tuple[Found, dict[str, Any], list[Violation]]:
    """The document as an object with its violations (cached); SKIP if the root is not an object."""
    found = await located(ctx)
    if not isinstance(found.document, dict):
        blocked(OBJECT, "the document's root is not an object (DWD-DOC-001 reports it)")
    if "dw:violations" not in ctx.shared:
        ctx.shared["dw:violations"] = validate(found.document)
    violations: list[Violation] = ctx.shared["dw:violations"]
    return found, found.document, violations


async def with_tools(ctx: CaseContext) -> tuple[Found, dict[str, Any], list[Violation], list[dict[str, Any]]]:
    found, document, violations = await judged(ctx)
    tools = tools_of(document)
    if not tools:
        skip("the document lists no tool objects to judge")
    return found, document, violations, tools


def fail_on(found: Found, violations: list[Violation], *rows: str) -> None:
    """FAIL (WARN for a SHOULD-like row) naming each violation of `rows`: pointer, keyword, schema path."""
    bad = violations_of(violations, *rows)
    if bad:
        assert found.source is not None
        missed(
            f"{len(bad)} violation(s) in the document ({found.source.describe()}): {describe(bad)}",
            violations=[v.as_dict() for v in bad],
            **found.evidence,
        )
