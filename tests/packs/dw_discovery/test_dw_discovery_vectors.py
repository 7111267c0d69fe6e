"""Every hand-written dw-discovery vector is judged exactly as it says.

Why: the vectors are the suite's golden data. A valid vector must give no violation at all; an invalid
one must give exactly the violations it lists (JSON pointer and keyword), and each of them must be
attributed to the vector's requirement row, because that attribution decides which check fails.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.model.vectors import lint, load
from conformance_packs.dw_discovery.document import validate

VECTORS = load("dw-discovery", "documents.json")


def test_there_are_enough_vectors_of_both_kinds() -> None:
    valid = [v for v in VECTORS if v["valid"]]
    invalid = [v for v in VECTORS if not v["valid"]]
    assert len(VECTORS) >= 40 and len(valid) >= 15 and len(invalid) >= 40
    # Each invalid vector breaks exactly one constraint.
    assert all(len(v["errors"]) == 1 for v in invalid)


def test_the_vector_files_lint_clean() -> None:
    count, problems = lint("dw-discovery")
    assert problems == [] and count == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    found = validate(vector["document"])
    assert {(v.pointer, v.keyword) for v in found} == {
        (e["pointer"], e["keyword"]) for e in vector.get("errors", [])
    }
    assert all(v.row == vector["requirement"] for v in found)
    assert all(v.schema_path.startswith("#/") and v.message for v in found)
