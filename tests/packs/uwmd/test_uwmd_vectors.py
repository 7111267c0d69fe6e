"""The UWMD vectors as data: they lint, they agree with the reference and with the harness, and each
hostile payload tells a protected decoder from a naive one (so the SEC-005 checks can fail).

When ../shared is present the example deals and the EditOperation vectors are also checked against the
upstream schemas (read there, never copied), as an independent oracle for the project's own definitions.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

from conformance import schemas
from conformance.model import vectors
from conformance_packs.uwmd import common
from conformance_reference import uwmd_codecs as codecs
from conformance_reference.uwmd_server import UwmdService
from conformance_reference.uwmd_state import PRIMARY, ServiceError, UwmdStore, validate

ALL = {
    name: vectors.load("uwmd", name)
    for name in ("deals.json", "expansions.json", "edit-operations.json", "security.json")
}
EXPANSIONS = [v for v in ALL["expansions.json"] if v["kind"] == "expansion"]
NON_DEAL = [v for v in ALL["expansions.json"] if v["kind"] == "non-deal-uri"]
SELECTIONS = [v for v in ALL["expansions.json"] if v["kind"] == "selection"]
OPERATIONS = ALL["edit-operations.json"]
HOSTILE = [v for v in ALL["security.json"] if v["kind"] == "hostile" and "body_base64" in v]
DEALS = {v["id"].removeprefix("uwmd.deal."): v for v in ALL["deals.json"]}


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [v["id"] for v in items]


def test_uwmd_vectors_lint_clean() -> None:
    count, problems = vectors.lint("uwmd")
    assert problems == []
    assert count == sum(len(v) for v in ALL.values()) + len(vectors.load("uwmd", "digests.json"))


@pytest.mark.parametrize("vector", EXPANSIONS, ids=ids(EXPANSIONS))
def test_template_expansions(vector: dict[str, Any]) -> None:
    args = (vector["deal_id"], vector.get("representation"), vector.get("view"))
    assert codecs.resource_uri(*args) == common.deal_uri(*args) == vector["uri"]
    parsed = codecs.parse_uri(vector["uri"])
    assert parsed is not None and parsed.deal_id == vector["deal_id"]
    assert parsed.view == vector.get("view")
    assert parsed.representation == (vector.get("representation") or "uw-json")
    if not vector.get("representation") and not vector.get("view"):
        assert vector["uri"] in common.accepted_uris(vector["deal_id"])


@pytest.mark.parametrize("vector", NON_DEAL, ids=ids(NON_DEAL))
def test_uris_that_name_no_deal(vector: dict[str, Any]) -> None:
    assert codecs.parse_uri(vector["uri"]) is None


@pytest.fixture(scope="module")
def service() -> UwmdService:
    return UwmdService(UwmdStore(None), PRIMARY)


@pytest.mark.parametrize("vector", SELECTIONS, ids=ids(SELECTIONS))
def test_selections_have_their_outcome_class(vector: dict[str, Any], service: UwmdService) -> None:
    deal_id = DEALS[vector["deal"]]["deal_id"]
    try:
        outcome = service.get_document(PRIMARY, {"deal_id": deal_id, **vector["selection"]})
    except ServiceError as exc:
        assert exc.status == vector["expect"], exc.body()
        return
    assert vector["expect"] == "SUCCESS"
    view = vector["selection"].get("view")
    assert outcome.structured["fidelity"] == ("view" if view else "model")


@pytest.mark.parametrize("vector", OPERATIONS, ids=ids(OPERATIONS))
def test_edit_operations(vector: dict[str, Any]) -> None:
    valid = not schemas.errors(common.SCHEMA_ID, "editOperation", vector["operation"])
    assert valid is vector["valid"]
    if not vector["valid"]:
        return
    store = UwmdStore(None)
    digest = codecs.semantic_digest(DEALS["harbor"]["document"])
    context = {"actor": "test", "source": "user"}
    call = (PRIMARY, "uw_demo_harbor", codecs.etag(digest), vector["operation"], context)
    if "refused" in vector:
        with pytest.raises(ServiceError) as refused:
            store.apply_edit(*call)
        assert (refused.value.status, refused.value.code) == (
            vector["refused"]["status"],
            vector["refused"]["code"],
        )
        assert store.fetch(PRIMARY, "uw_demo_harbor", "uw-json").digest == digest  # nothing committed
        return
    receipt = store.apply_edit(*call)
    assert receipt["semantic_digest"] != digest and receipt["etag"] == codecs.etag(receipt["semantic_digest"])


def test_every_operation_kind_has_valid_and_invalid_vectors() -> None:
    kinds = {"frontmatter_set", "section_replace", "section_supersede", "pipeline_log_append"}
    valid = {v["operation"]["kind"] for v in OPERATIONS if v["valid"]}
    invalid = {
        v["operation"].get("kind") for v in OPERATIONS if not v["valid"] and isinstance(v["operation"], dict)
    }
    assert kinds <= valid and kinds <= invalid


# --------------------------------------------------------------------------- deals


@pytest.mark.parametrize("name", sorted(DEALS))
def test_example_deals_are_what_they_claim(name: str) -> None:
    vector = DEALS[name]
    document = vector["document"]
    assert not schemas.errors(common.SCHEMA_ID, "envelope", document)
    for view in vector.get("absent_views", []):
        with pytest.raises(codecs.CodecError) as absent:
            codecs.view_csv(document, view)
        assert absent.value.status == 406
    for view in set(codecs.VIEWS) - set(vector.get("absent_views", [])):
        assert codecs.view_csv(document, view).startswith("field,value\r\n")
    codes = {issue["code"] for issue in validate(document)["issues"]}
    assert set(vector.get("defects", [])) <= codes
    if "defects" not in vector:
        assert not {c for c in codes if c.startswith("CC-")}, codes
    if "canary" in vector:
        text = json.dumps(document, ensure_ascii=False)
        sections = document["sections"]
        assert vector["canary"] in sections["deal_context"]["prose"]
        assert vector["canary"] in json.dumps(sections["risk_assessment"]["content"], ensure_ascii=False)
        assert text.count(vector["canary"]) >= 4
    else:
        assert common.CANARY not in json.dumps(document, ensure_ascii=False)


def test_the_example_deals_cover_the_catalogs_fixtures() -> None:
    assert {"harbor", "saguaro", "mesa-canary", "copper-defect", "tenant-b", "deal-1"} <= set(DEALS)
    assert set(DEALS["saguaro"]["absent_views"]) == {"debt", "valuation"}
    assert DEALS["tenant-b"]["tenant"] == "other"
    assert DEALS["deal-1"]["deal_id"] == "deal / 1"
    risk = DEALS["harbor"]["document"]["sections"]["risk_assessment"]["content"]["_meta"]["source"]
    assert risk.startswith("agent/")  # TOOL-016(b) replaces an agent-written block


@pytest.mark.parametrize("name", sorted(DEALS))
def test_every_representation_round_trips_the_model(name: str) -> None:
    document = DEALS[name]["document"]
    for representation in codecs.REPRESENTATIONS:
        encoded = codecs.encode(representation, document)
        body = encoded if isinstance(encoded, bytes) else encoded.encode("utf-8")
        decoded, digest = codecs.decode(representation, body)
        assert digest == DEALS[name]["semantic_digest"], representation
        assert decoded == document, representation  # lossless, down to int versus float


# --------------------------------------------------------------------------- hostile payloads


def naive_decode(vector: dict[str, Any], body: bytes) -> Any:
    """What a decoder without the protection the vector probes would do with it."""
    check = vector["check"]
    if check == "utf8":
        text = body.decode("utf-8", errors="replace")
        if vector["representation"] == "uw-xml":
            return codecs.xml_object(ElementTree.fromstring(text), 0)
        return json.loads(text)
    if check == "xml-entities":
        return codecs.xml_object(ElementTree.fromstring(body.decode("utf-8")), 0)
    if check == "zip-limits":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            return codecs.bundle_to_envelope({n: archive.read(n).decode("utf-8") for n in archive.namelist()})
    if check == "digest":
        return json.loads(body)
    raise AssertionError(check)


@pytest.mark.parametrize("vector", HOSTILE, ids=ids(HOSTILE))
def test_hostile_payloads_tell_protected_from_naive(vector: dict[str, Any]) -> None:
    body = base64.b64decode(vector["body_base64"])
    assert hashlib.sha256(body).hexdigest() == vector["sha256"]
    with pytest.raises(codecs.CodecError):
        codecs.decode(vector["representation"], body)
    if vector["naive_decoder"].startswith("accepts") or vector["naive_decoder"].startswith("replaces"):
        envelope = codecs.check_envelope(naive_decode(vector, body))
        text = json.dumps(envelope, ensure_ascii=False)
        for marker in vector["markers"]:
            assert marker in text  # the naive decoder expanded what the protected one refused


def test_the_zip_bomb_compresses_over_100_to_1() -> None:
    bomb = next(v for v in HOSTILE if v["id"] == "uwmd.hostile.zip-bomb")
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(bomb["body_base64"]))) as archive:
        ratios = [i.file_size / i.compress_size for i in archive.infolist() if i.compress_size]
    assert max(ratios) > 100


# --------------------------------------------------------------------------- against the upstream schemas


def test_deals_validate_against_the_upstream_envelope_schema(shared_dir: Path) -> None:
    schema = json.loads(
        (shared_dir / "upstream" / "uwmd" / "uw-document-envelope.schema.json").read_text("utf-8")
    )
    validator = jsonschema.Draft202012Validator(schema)
    for name, vector in DEALS.items():
        problems = [e.message for e in validator.iter_errors(vector["document"])]
        assert problems == [], name


def test_operation_vectors_agree_with_the_upstream_edit_operation_schema(shared_dir: Path) -> None:
    schema = json.loads((shared_dir / "upstream" / "uwmd" / "edit-operation.schema.json").read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    for vector in OPERATIONS:
        assert validator.is_valid(vector["operation"]) is vector["valid"], vector["id"]
