"""The MAP golden vectors, recomputed; and the offline pieces the checks stand on (C-1/C-2, JCS, schemas).

Every digest is recomputed from the exact bytes here, not copied: a vector that drifted from its bytes
fails, and so does a classifier or canonicaliser that drifted from the catalog's rules.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.model import vectors
from conformance.pack_api.statuses import classify, map_code
from conformance_packs.map_review import jcs
from conformance_packs.map_review.digest import MAP_DIGEST
from conformance_packs.map_review.surface import first_difference, normalise

SCHEMA_ID = "urn:mcp-conformance:map-review:1"
SEED_TEXT = "# Getting started\n\nCreate a workspace, connect your inbox and invite your team.\n"


def load(name: str) -> list[dict[str, Any]]:
    return vectors.load("map-review", name)


def test_vectors_lint_clean() -> None:
    count, problems = vectors.lint("map-review")
    assert problems == []
    assert count == sum(len(load(f.name.split("/")[1])) for f in vectors.vector_files("map-review"))
    assert count >= 60


def test_digest_vectors_are_their_bytes() -> None:
    found = load("digests.json")
    for vector in found:
        data = vector["text"].encode("utf-8")
        assert len(data) == vector["utf8_length"], vector["id"]
        assert vector["digest"] == "sha-256:" + hashlib.sha256(data).hexdigest(), vector["id"]
    assert len({v["digest"] for v in found}) == len(found)
    by_id = {v["id"]: v for v in found}
    seed = by_id["map.digest.seed-artifact"]
    assert seed["text"] == SEED_TEXT and seed["utf8_length"] == 80
    assert seed["digest"] == "sha-256:4ffdf504c44a73a059c09c9cb30362c04f593b3af405b83bc084bb045067f95c"
    # The catalog's negative controls (MAP-DIG-002), verified there and again here.
    assert by_id["map.digest.seed-without-final-newline"]["digest"].endswith(
        "ec0debc22503a2392b42eec7c0754f9a959203f1c5b37fbcce44aead4db32b81"
    )
    assert by_id["map.digest.seed-crlf"]["digest"].endswith(
        "2fbc4b556709132a57f74cec464456ae3704b2133faca07771408a095d11f07b"
    )
    astral = by_id["map.digest.astral"]["text"]
    assert any(ord(ch) > 0xFFFF for ch in astral) and "\r\n" in by_id["map.digest.crlf"]["text"]
    assert not by_id["map.digest.no-final-newline"]["text"].endswith("\n")
    assert any(ord(ch) > 0x7F for ch in by_id["map.digest.non-ascii"]["text"])


def test_instance_vectors_break_exactly_their_rule() -> None:
    for name in ("schemas.json", "comment-rule.json"):
        for vector in load(name):
            validator = schemas.validator(SCHEMA_ID, vector["definition"])
            errors = list(validator.iter_errors(vector["instance"]))
            if vector["valid"]:
                assert errors == [], (vector["id"], [e.message for e in errors])
            else:
                assert len(errors) == 1, (vector["id"], [e.message for e in errors])
                assert "/" + "/".join(str(p) for p in errors[0].schema_path) == vector["breaks"], vector["id"]


def test_both_tools_have_valid_and_invalid_vectors_for_inputs_and_outputs() -> None:
    found = load("schemas.json") + load("comment-rule.json")
    for definition in (
        "read_review.input",
        "read_review.output",
        "decide_review.input",
        "decide_review.result",
    ):
        kinds = {v["valid"] for v in found if v["definition"] == definition}
        assert kinds == {True, False}, definition
    comment = [v for v in load("comment-rule.json")]
    assert {v["breaks"] for v in comment if not v["valid"]} >= {"/allOf/0/then/required", "/allOf/0/else/not"}
    longest = next(v for v in comment if v["id"] == "map.comment.max-length-astral")["instance"]["comment"]
    assert len(longest) == 4096 and len(longest.encode("utf-16-le")) // 2 > 4096


def test_contract_digest_format_vectors() -> None:
    for vector in load("contract-digest.json"):
        if vector["kind"] == "digest-format":
            assert bool(MAP_DIGEST.fullmatch(vector["value"])) is vector["valid"], vector["id"]
    pin = next(v for v in load("contract-digest.json") if v["kind"] == "contract-pin")["contract"]
    assert pin["contractDigest"] == "sha-256:de91a49de4cba91209be253456e7c56709791fff877a060560d4eada0cc9468c"


def test_the_p7_exchange_vectors_hold_together() -> None:
    read, approve, late = load("p7-exchange.json")
    result = read["response"]["result"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert (
        result["structuredContent"]["expires_at"] == read["clock"]["before"] == late["clock"]["at_or_after"]
    )
    assert read["clock"]["now"] < read["clock"]["before"] <= late["clock"]["now"]
    assert (
        approve["request"]["params"]["arguments"]["expected_revision"]
        == result["structuredContent"]["revision"]
    )
    assert classify(late["response"]).status == late["expect_status"] == 410
    assert schemas.errors(SCHEMA_ID, "read_review.output", result["structuredContent"]) == []


# --------------------------------------------------------------------------- JCS


def test_jcs_digest_of_the_published_contract(shared_dir: Path) -> None:
    contract = json.loads((shared_dir / "upstream" / "map" / "publication-approval.json").read_text("utf-8"))
    # The one stored contract revision; the seed's de91a49d... belongs to an unpublished revision (G-M6).
    assert jcs.digest(contract) == "sha-256:247dc8524076c11b713b83ee4fa0168bae4df0f9456758d48d9483b3ece70c5b"


# --------------------------------------------------------------------------- C-1 / C-2


def rpc_result(result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


@pytest.mark.parametrize(
    ("response", "kind", "status", "weak"),
    [
        (rpc_result({"content": [], "isError": False}), "SUCCESS", None, False),
        (rpc_result({"content": []}), "SUCCESS", None, False),
        (
            rpc_result({"content": [], "isError": True, "structuredContent": {"status": 409}}),
            "STATUS",
            409,
            False,
        ),
        (
            rpc_result({"isError": True, "structuredContent": {"code": "Already-Decided"}}),
            "STATUS",
            409,
            False,
        ),
        (
            rpc_result({"isError": True, "structuredContent": {"error": {"code": "expired"}}}),
            "STATUS",
            410,
            False,
        ),
        (
            rpc_result({"isError": True, "structuredContent": {"problem": {"status": 412}}}),
            "STATUS",
            412,
            False,
        ),
        (
            rpc_result({"isError": True, "content": [{"type": "text", "text": '{"httpStatus": 403}'}]}),
            "STATUS",
            403,
            False,
        ),
        (
            rpc_result({"isError": True, "content": [{"type": "text", "text": "Stale revision"}]}),
            "STATUS",
            409,
            True,
        ),
        (
            rpc_result({"isError": True, "content": [{"type": "text", "text": "It has expired"}]}),
            "STATUS",
            410,
            True,
        ),
        (
            rpc_result({"isError": True, "content": [{"type": "text", "text": "Nope."}]}),
            "ERROR_UNCLASSIFIED",
            None,
            False,
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "x", "data": {"status": 409}}},
            "STATUS",
            409,
            False,
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "x", "data": {"code": "gone"}}},
            "STATUS",
            410,
            False,
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}},
            "REJECTED_INPUT",
            None,
            False,
        ),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "?"}}, "UNKNOWN_TOOL", None, False),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "?"}},
            "ERROR_UNCLASSIFIED",
            None,
            False,
        ),
        (None, "NO_RESULT", None, False),
    ],
)
def test_outcome_classification(response: Any, kind: str, status: int | None, weak: bool) -> None:
    outcome = classify(response)
    assert (outcome.kind, outcome.status, outcome.weak) == (kind, status, weak)


def test_code_table() -> None:
    assert map_code("PROTO-EDIT-17") == 409
    assert map_code("BINDING_PRECONDITION_FAILED") == 412
    assert map_code("binding-anything-else") == 400
    assert map_code("permission_denied") == 403
    assert map_code("409") == 409 and map_code(True) is None and map_code("teapot") is None


# --------------------------------------------------------------------------- schema normalisation


def test_normalise_drops_annotations_but_not_property_names() -> None:
    seed = schemas.schema(SCHEMA_ID)["$defs"]["read_review.output"]
    annotated = json.loads(json.dumps(seed))
    annotated["description"] = "added"
    annotated["properties"]["subject"]["properties"]["title"]["title"] = "The title"
    annotated["required"] = list(reversed(annotated["required"]))
    assert first_difference(normalise(seed), normalise(annotated)) is None
    dropped = json.loads(json.dumps(seed))
    del dropped["properties"]["subject"]["properties"]["title"]
    assert "/properties/subject/properties/title: missing" in str(
        first_difference(normalise(seed), normalise(dropped))
    )
    loosened = json.loads(json.dumps(seed))
    loosened["additionalProperties"] = True
    assert first_difference(normalise(seed), normalise(loosened)) is not None
