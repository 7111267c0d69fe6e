"""The preview judges on hand-made results, including shapes an SDK server cannot send.

Why: the reference and its mutants only produce what the `mcp` SDK can serialise, so a lone surrogate
(a split character escaped as \\udcXX), envelope-level previews, explicit unavailability and a missing
limit are pinned here, on the pure functions the preview checks call.
"""

from __future__ import annotations

import json
from typing import Any

from conformance_packs.dw_discovery import previews as pv


def _event(preview: str, size: int, truncated: bool, payload: Any = None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "payload_size_bytes": size,
        "payload_preview": {
            "encoding": "json",
            "size_bytes": size,
            "preview_bytes": pv.utf8_length(preview)[0],
            "truncated": truncated,
            "preview": preview,
        },
        **extra,
    }
    if payload is not None:
        event["payload"] = payload
    return event


def _one(result: Any, document_limit: int | None = None) -> pv.Preview:
    found, _ = pv.extract(result, "t#1", document_limit)
    assert len(found) == 1
    return found[0]


def test_utf8_length_counts_what_a_lone_surrogate_stands_for() -> None:
    assert pv.utf8_length("a€") == (4, True)
    assert pv.utf8_length("ab\udce2") == (3, False)


def test_a_correct_cut_passes_every_rule() -> None:
    payload = {"v": "aaaaaa€zz"}
    full = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    p = _one(
        {"payload_preview_limit_bytes": 14, "events": [_event(full[:12], len(full.encode()), True, payload)]}
    )
    assert (p.limit, p.limit_source) == (14, "result /payload_preview_limit_bytes")
    assert p.full_text() == full
    rules = (pv.within_limit(p), pv.byte_count(p), pv.truncated_flag(p), pv.full_payload(p))
    assert rules == (None, None, None, None)
    assert pv.utf8_cut(p) == (None, None)


def test_a_lone_surrogate_is_a_split_character() -> None:
    p = _one({"events": [_event("abc\udce2\udc82", 20, True)]}, document_limit=5)
    problem, _ = pv.utf8_cut(p)
    assert problem is not None and "lone surrogate" in problem
    assert pv.within_limit(p) is None  # the 5 bytes it stands for fit the limit


def test_a_trailing_replacement_character_is_weak_evidence_without_the_payload() -> None:
    p = _one({"events": [_event("abc\ufffd", 20, True)]}, document_limit=6)
    problem, note = pv.utf8_cut(p)
    assert problem is None and note is not None and "U+FFFD" in note


def test_a_cut_far_short_of_the_limit_is_weak() -> None:
    p = _one({"events": [_event("ab", 100, True)]}, document_limit=50)
    assert pv.utf8_cut(p) == (None, f"{p.where}: a cut preview of 2 bytes is more than 3 bytes short of 50")


def test_limit_zero_means_no_preview_bytes() -> None:
    empty = _one({"events": [_event("", 10, True, {"v": "ab"})]}, document_limit=0)
    assert (pv.within_limit(empty), pv.truncated_flag(empty), pv.full_payload(empty)) == (None, None, None)
    shown = _one({"events": [_event("{", 10, True, {"v": "ab"})]}, document_limit=0)
    assert pv.within_limit(shown) is not None


def test_an_untruncated_preview_must_be_the_whole_payload() -> None:
    p = _one({"events": [_event('{"v":"a', 10, False, {"v": "ab"})]}, document_limit=64)
    problem = pv.truncated_flag(p)
    assert problem is not None and "not truncated" in problem


def test_counts_must_be_integers() -> None:
    event = _event("x", 10, True)
    event["payload_preview"]["preview_bytes"] = "1"
    assert "preview_bytes is not an integer" in str(pv.byte_count(_one({"events": [event]}, 5)))


def test_explicit_unavailability_satisfies_the_full_payload_rule() -> None:
    p = _one({"events": [_event("ab", 20, True, payload_unavailable=True)]}, document_limit=2)
    assert pv.full_payload(p) is None
    bare = _one({"events": [_event("ab", 20, True)]}, document_limit=2)
    assert pv.full_payload(bare) is not None


def test_envelope_previews_are_read_too() -> None:
    envelope = {
        "schema": "durable-workflow.v2.mcp-tool-result",
        "version": 1,
        "status": "ok",
        "payload_preview": "0123456789",
        "payload_preview_truncated": True,
        "payload_preview_limit_bytes": 8,
    }
    p = _one(envelope)
    assert p.kind == "envelope" and p.limit == 8
    assert pv.within_limit(p) is not None  # 10 bytes > 8
    assert pv.full_payload(p) is not None  # cut, and no `result`
    assert pv.full_payload(_one({**envelope, "result": {"a": 1}})) is None


def test_no_limit_anywhere_leaves_the_limit_unknown() -> None:
    p = _one({"events": [_event("ab", 20, True)]})
    assert (p.limit, p.limit_source) == (None, "")
    assert pv.within_limit(p) is None and pv.truncated_flag(p) is None
