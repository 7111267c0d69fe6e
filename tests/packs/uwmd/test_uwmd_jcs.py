"""The semantic digest: RFC 8785 canonical JSON and `sha256:` + SHA-256, in both of the project's
implementations (the harness's oracle, conformance/pack_api/jcs.py through
conformance_packs/uwmd/jcs.py, and the reference server's own, conformance_reference/uwmd_codecs/jcs.py),
pinned to the digest vectors, to RFC 8785's examples, to the example deals' pinned digests and, when
../shared is present, to the catalog's Parkview digest recomputed from the upstream envelope.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from conformance.model import vectors
from conformance.pack_api import jcs as core
from conformance_packs.uwmd import jcs
from conformance_reference import uwmd_codecs as reference

PARKVIEW = "sha256:98cf81a8927d6449fee516f0412f76df43b20b54bf49d89ffbd0ddd10b5b9fb7"
DIGESTS = [v for v in vectors.load("uwmd", "digests.json") if v["kind"] == "digest"]
DEALS = [v for v in vectors.load("uwmd", "deals.json") if v["kind"] == "deal"]


def both(value: Any, envelope: bool = False) -> tuple[str, str]:
    if envelope:
        value = {k: v for k, v in value.items() if k not in jcs.VOLATILE}
    return core.canonicalize(value), reference.canonical_json(value)


@pytest.mark.parametrize("vector", DIGESTS, ids=[v["id"] for v in DIGESTS])
def test_digest_vectors(vector: dict[str, Any]) -> None:
    value = json.loads(vector["json"])
    harness, server = both(value, vector.get("envelope", False))
    assert harness == server == vector["canonical"]
    assert "sha256:" + hashlib.sha256(harness.encode("utf-8")).hexdigest() == vector["digest"]
    if vector.get("envelope"):
        assert jcs.semantic_digest(value) == reference.semantic_digest(value) == vector["digest"]


@pytest.mark.parametrize("vector", DEALS, ids=[v["id"] for v in DEALS])
def test_example_deals_keep_their_pinned_digests(vector: dict[str, Any]) -> None:
    document = vector["document"]
    assert jcs.semantic_digest(document) == reference.semantic_digest(document) == vector["semantic_digest"]
    assert document["semantic_digest"] == vector["semantic_digest"]
    assert document["frontmatter"]["deal_id"] == vector["deal_id"]


def test_parkview_recomputes_to_the_catalogs_digest(shared_dir: Path) -> None:
    document = json.loads((shared_dir / "upstream" / "uwmd" / "parkview.uw.json").read_text(encoding="utf-8"))
    assert document["semantic_digest"] == PARKVIEW
    assert jcs.semantic_digest(document) == reference.semantic_digest(document) == PARKVIEW
    # The reference decodes it with every protection on and verifies its embedded digest.
    data = json.dumps(document, ensure_ascii=False).encode("utf-8")
    assert reference.decode("uw-json", data)[1] == PARKVIEW
    # A single changed value changes the digest; a changed volatile member does not.
    changed = {**document, "frontmatter": {**document["frontmatter"], "deal_name": "Parkview"}}
    assert jcs.semantic_digest(changed) != PARKVIEW
    assert jcs.semantic_digest({**document, "generated_at": "2030-01-01T00:00:00Z"}) == PARKVIEW


def test_number_forms_agree_with_each_other_and_round_trip() -> None:
    """5 000 random doubles (every exponent range) serialise alike in both implementations and parse
    back to the same double: the shortest round-trip digits, placed by ECMAScript's rules."""
    rng = random.Random(8785)
    checked = 0
    while checked < 5000:
        value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if not math.isfinite(value):
            continue
        text = core.number(value)
        assert text == reference.es_number(value), value
        assert float(text) == value
        checked += 1


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # ECMA-262 Number::toString examples and RFC 8785 Appendix B edge cases.
        (0.0, "0"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (123e-20, "1.23e-18"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (9007199254740992.0, "9007199254740992"),
        (295147905179352830000.0, "295147905179352830000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (333333333.33333329, "333333333.3333333"),
        (-1e-7, "-1e-7"),
    ],
)
def test_ecmascript_numbers(value: float, text: str) -> None:
    assert core.number(value) == reference.es_number(value) == text


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "\ud800", {"k": "\udfff"}, {1: 2}, object()])
def test_values_without_a_canonical_form_are_refused(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        core.canonicalize(bad)
    with pytest.raises((ValueError, TypeError)):
        reference.canonical_json(bad)


def test_key_order_is_utf16_not_code_points() -> None:
    """U+1F600 is a surrogate pair D83D DE00 in UTF-16, so it sorts before U+FB33 (code points say after)."""
    keys = ["\ufb33", "\U0001f600"]
    assert sorted(keys) == ["\ufb33", "\U0001f600"]
    assert core.canonicalize(dict.fromkeys(keys, 0)) == '{"\U0001f600":0,"\ufb33":0}'
