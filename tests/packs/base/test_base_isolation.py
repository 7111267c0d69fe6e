"""A case's verdict does not depend on which other cases ran: each row of a selection, run alone
(`-k ID`), gets the verdict and message it gets in the whole base pack, on the same server.

The selection is the rows whose verdict once did depend on it, or that read what earlier cases left
(the wire log, a shared session's state): BASE-MODERN-002 (the unsupported protocol version, once a
stdio case of BASE-HTTP-004 whose FAIL came from earlier requests), BASE-MODERN-003 (once a stdio case
of BASE-HTTP-016), BASE-LOG-004,
BASE-LIFE-010, BASE-RPC-005 and -006, BASE-STDIO-001 and BASE-CANCEL-002. The whole pack in every
revision is too slow for CI to run each row alone (a server start per row and revision).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import run, stdio

ROWS = (
    "BASE-MODERN-002",
    "BASE-MODERN-003",
    "BASE-LOG-004",
    "BASE-LIFE-010",
    "BASE-RPC-005",
    "BASE-RPC-006",
    "BASE-STDIO-001",
    "BASE-CANCEL-002",
)
#: Two revisions, one of each era: every row above is judged in one of them at least.
REVISIONS = ("2026-07-28", "2025-11-25")


def _verdicts(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(requirement, check) -> verdict of the rows of the selection (a message may count what it read:
    a row that reads the wire log reads more of it in the whole pack)."""
    return {(c["requirement"], c["check"]): c["verdict"] for c in report["cases"] if c["requirement"] in ROWS}


@pytest.mark.slow
@pytest.mark.parametrize("revision", REVISIONS)
def test_a_row_alone_gets_its_verdict_in_the_whole_pack(revision: str) -> None:
    server = stdio("conformance_reference.base_server")
    whole = _verdicts(run([server], protocol=revision))
    alone: dict[tuple[str, str], str] = {}
    for row in ROWS:
        alone.update(_verdicts(run([server], protocol=revision, select=row)))
    assert alone == whole
    assert {row for row, _ in whole} >= (
        {"BASE-MODERN-002", "BASE-MODERN-003"} if revision == "2026-07-28" else {"BASE-LIFE-010"}
    )
